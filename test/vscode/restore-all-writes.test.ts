/**
 * Before Restore All of an edited message, VS Code saves the unsaved editors among the files it
 * will write. Those files are the core's answer to a dry run (restoreAllWrites), no longer a copy
 * of the core's choice of checkpoint in the extension: they are the files the real Restore All
 * then writes and deletes, on a task restored before and for its first message, and asking
 * changes nothing. Real sidecar process, scripted model server.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { CheckpointKind, EditMessageMode, RestoreMode } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { restoreAllWrites } from "../../adapters/vscode/src/checkpoints/restore-all-writes.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { setAutoApproval } from "../runtime/harness.js";
import { openWindows, watch } from "../tasks/follow-helpers.js";

const scope = scopedSidecars();
const write = (p: string, content: string) => ({ toolCalls: [{ name: "write_to_file", input: { path: p, content } }] });
const complete = (result: string) => ({ toolCalls: [{ name: "attempt_completion", input: { result } }] });

describe("the files VS Code saves before Restore All", () => {
  it("are those the core names in a dry run, and the real Restore All then writes those", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 1, [
      write("notes.txt", "one\n"),
      complete("Wrote notes."),
      write("extra.txt", "extra\n"),
      complete("Added extra."),
      write("notes.txt", "three\n"),
      complete("Changed the notes."),
    ]);
    const [{ clients }] = sidecars;
    await setAutoApproval(clients, { editFiles: true, readFiles: true });
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "Write notes", profileId });
    const events = watch(clients, taskId);
    await events.completedAfter(0n);
    let seq = events.lastSeq();
    await clients.tasks.sendMessage({ taskId, text: "Add extra" });
    await events.completedAfter(seq);
    // Restored before: the task goes back to its first completion, with its files (extra.txt goes).
    const { checkpoints } = await clients.checkpoints.listCheckpoints({ taskId });
    const firstCompletion = checkpoints.find((c) => c.kind === CheckpointKind.COMPLETION)!;
    await clients.checkpoints.restore({
      taskId,
      checkpointId: firstCompletion.id,
      mode: RestoreMode.FILES_AND_TASK,
    });
    expect(fs.existsSync(path.join(workspace, "extra.txt"))).toBe(false);
    seq = events.lastSeq();
    await clients.tasks.sendMessage({ taskId, text: "Change the notes" });
    await events.completedAfter(seq);

    const editMessage = (req: Parameters<typeof clients.checkpoints.editMessage>[0]) =>
      clients.checkpoints.editMessage(req);
    const messages = async () => (await clients.tasks.getTask({ taskId })).messages;
    for (const text of ["Change the notes", "Write notes"]) {
      const message = (await messages()).find((m) => m.text === text)!;
      const before = { messages: await messages(), notes: fs.readFileSync(path.join(workspace, "notes.txt"), "utf8") };
      const writes = await restoreAllWrites(editMessage, taskId, message.id, `${text}, differently`);
      expect({
        messages: await messages(),
        notes: fs.readFileSync(path.join(workspace, "notes.txt"), "utf8"),
      }).toEqual(before);
      // Unchanged text: Restore All restores nothing, so nothing is to be saved.
      expect(await restoreAllWrites(editMessage, taskId, message.id, text)).toEqual([]);
      const real = await clients.checkpoints.editMessage({
        taskId,
        messageId: message.id,
        text: `${text}, differently`,
        mode: EditMessageMode.RESTORE_ALL,
      });
      expect(writes).not.toEqual([]);
      expect([...writes].sort()).toEqual([...real.restoredPaths, ...real.deletedPaths].sort());
    }
    // The second message, sent after the restore: back to the files it was sent with; the first: none.
    expect(fs.existsSync(path.join(workspace, "notes.txt"))).toBe(false);
    await events.stop();
  });
});
