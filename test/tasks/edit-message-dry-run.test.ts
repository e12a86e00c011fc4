/**
 * EditMessage with dry_run answers what Restore All of an edited message would do (the
 * checkpoint whose files it restores, the files it writes and deletes) and changes nothing: no
 * file, message, checkpoint or ref. The real Restore All then restores that checkpoint and those
 * files. Clients tell the person from this answer instead of choosing the checkpoint themselves.
 * Real sidecar process, scripted model server.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { CheckpointKind, EditMessageMode, RestoreMode } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { MessageRole } from "../../core/src/gen/dline/v1/task_pb.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { setAutoApproval } from "../runtime/harness.js";
import { openWindows, watch } from "./follow-helpers.js";

const scope = scopedSidecars();
const write = (p: string, content: string) => ({ toolCalls: [{ name: "write_to_file", input: { path: p, content } }] });
const complete = (result: string) => ({ toolCalls: [{ name: "attempt_completion", input: { result } }] });

/** Every file of the workspace (its own .git aside) with its content. */
function filesIn(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    const rel = path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join("/");
    if (entry.isFile() && !rel.startsWith(".git/")) out[rel] = fs.readFileSync(path.join(root, rel), "utf8");
  }
  return out;
}

/** Every ref of every shadow repository, with what it points at. */
function shadowRefs(docsDir: string): string[] {
  const dir = path.join(docsDir, "checkpoints");
  return fs.readdirSync(dir).flatMap((repo) => {
    const gitDir = path.join(dir, repo, ".git");
    if (!fs.existsSync(gitDir)) return [];
    return execFileSync("git", ["--git-dir", gitDir, "for-each-ref", "--format=%(refname) %(objectname)"])
      .toString()
      .split("\n")
      .filter(Boolean);
  });
}

describe("EditMessage dry_run (what Restore All would do)", () => {
  it("names the checkpoint and the files the real Restore All then restores, and changes nothing: on a task restored before, and on its first message", async () => {
    const { sidecars, workspace, profileId, roots } = await openWindows(scope, 1, [
      write("notes.txt", "one\n"),
      complete("Wrote notes."),
      write("notes.txt", "two\n"),
      write("extra.txt", "extra\n"),
      complete("Changed the notes."),
      write("notes.txt", "three\n"),
      write("more.txt", "more\n"),
      complete("Wrote more."),
    ]);
    const [{ clients }] = sidecars;
    await setAutoApproval(clients, { editFiles: true, readFiles: true });
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "Write notes", profileId });
    const events = watch(clients, taskId);
    await events.completedAfter(0n);
    let seq = events.lastSeq();
    await clients.tasks.sendMessage({ taskId, text: "Change the notes" });
    await events.completedAfter(seq);
    expect(filesIn(workspace)).toMatchObject({ "notes.txt": "two\n", "extra.txt": "extra\n" });

    // Restored before: files and task back to the checkpoint after the first write; then a new
    // message. The checkpoints of the messages the restore removed are still in the repository.
    const list = async () => (await clients.checkpoints.listCheckpoints({ taskId })).checkpoints;
    const firstWrite = (await list()).find((c) => c.kind === CheckpointKind.TURN)!;
    await clients.checkpoints.restore({ taskId, checkpointId: firstWrite.id, mode: RestoreMode.FILES_AND_TASK });
    seq = events.lastSeq();
    await clients.tasks.sendMessage({ taskId, text: "Write more" });
    await events.completedAfter(seq);
    expect(filesIn(workspace)).toMatchObject({ "notes.txt": "three\n", "more.txt": "more\n" });
    expect(filesIn(workspace)["extra.txt"]).toBeUndefined();

    const state = async () => ({
      files: filesIn(workspace),
      messages: (await clients.tasks.getTask({ taskId })).messages,
      checkpoints: await list(),
      refs: shadowRefs(roots.docsDir),
    });
    const edit = (messageId: string, text: string, dryRun: boolean, mode = EditMessageMode.RESTORE_ALL) =>
      clients.checkpoints.editMessage({ taskId, messageId, text, mode, dryRun });
    const sorted = (paths: readonly string[]) => [...paths].sort();

    // Restore All of the message sent after the restore: its run saved the files as they were
    // when it was sent (those of the checkpoint the restore went to) before its first edit, its
    // own checkpoint. The last one saved before it is the removed "Changed the notes"
    // completion's (files "two", extra.txt), which Restore All put back before.
    const before = await state();
    const sent = before.messages.find((m) => m.text === "Write more")!;
    const atSent = before.checkpoints.find((c) => c.messageId === sent.id && c.kind === CheckpointKind.TURN)!;
    const dry = await edit(sent.id, "Write more, differently", true);
    expect(dry).toMatchObject({
      restored: true,
      fileError: "",
      undoCheckpointId: "",
      checkpointId: atSent.id,
      restoredPaths: ["notes.txt"],
      deletedPaths: ["more.txt"],
    });
    // Neither does a dry Restore Chat, nor one of unchanged text.
    expect(await edit(sent.id, "Write more, differently", true, EditMessageMode.RESTORE_CHAT)).toMatchObject({
      restored: true,
      checkpointId: "",
      restoredPaths: [],
    });
    expect((await edit(sent.id, "Write more", true)).restored).toBe(false);
    expect(await state()).toEqual(before);
    const real = await edit(sent.id, "Write more, differently", false);
    expect(real.checkpointId).toBe(dry.checkpointId);
    expect(sorted(real.restoredPaths)).toEqual(sorted(dry.restoredPaths));
    expect(sorted(real.deletedPaths)).toEqual(sorted(dry.deletedPaths));
    expect(real.undoCheckpointId).not.toBe("");
    const restored = filesIn(workspace);
    expect(restored["notes.txt"]).toBe("one\n");
    expect(restored["more.txt"]).toBeUndefined();
    expect(restored["extra.txt"]).toBeUndefined();

    // Restore All of the first message: to the baseline, which had no notes.txt.
    const after = await state();
    const first = after.messages[0]!;
    const dryFirst = await edit(first.id, "Write other notes", true);
    const baseline = after.checkpoints.find((c) => c.kind === CheckpointKind.BASELINE)!;
    expect(dryFirst).toMatchObject({ restored: true, checkpointId: baseline.id, restoredPaths: [] });
    expect(dryFirst.deletedPaths).toEqual(["notes.txt"]);
    expect(await state()).toEqual(after);
    const realFirst = await edit(first.id, "Write other notes", false);
    expect(realFirst.checkpointId).toBe(dryFirst.checkpointId);
    expect(sorted(realFirst.restoredPaths)).toEqual(sorted(dryFirst.restoredPaths));
    expect(sorted(realFirst.deletedPaths)).toEqual(sorted(dryFirst.deletedPaths));
    expect(filesIn(workspace)["notes.txt"]).toBeUndefined();
    expect((await clients.tasks.getTask({ taskId })).messages).toEqual([]);
    await events.stop();
  });

  it("names the files in the same order as Compare, whatever order the task wrote them in: dry run, Restore All and a files restore alike", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 1, [
      write("zeta.txt", "z\n"),
      write("src/app.txt", "changed\n"),
      write("alpha.txt", "a\n"),
      write("README.md", "# changed\n"),
      write("mid/mu.txt", "m\n"),
      complete("Wrote five files."),
    ]);
    const [{ clients }] = sidecars;
    await setAutoApproval(clients, { editFiles: true, readFiles: true });
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "Write files", profileId });
    const events = watch(clients, taskId);
    await events.completedAfter(0n);
    const checkpoints = (await clients.checkpoints.listCheckpoints({ taskId })).checkpoints;
    const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE)!;
    const restored = ["README.md", "src/app.txt"];
    const deleted = ["alpha.txt", "mid/mu.txt", "zeta.txt"];
    const compared = await clients.checkpoints.compare({ taskId, checkpointId: baseline.id });
    expect(compared.files.map((f) => f.path)).toEqual([...restored, ...deleted].sort());

    const first = (await clients.tasks.getTask({ taskId })).messages[0]!;
    const dry = await clients.checkpoints.editMessage({
      taskId,
      messageId: first.id,
      text: "Write other files",
      mode: EditMessageMode.RESTORE_ALL,
      dryRun: true,
    });
    expect({ restored: dry.restoredPaths, deleted: dry.deletedPaths }).toEqual({ restored, deleted });

    const files = await clients.checkpoints.restore({ taskId, checkpointId: baseline.id, mode: RestoreMode.FILES });
    expect({ restored: files.restoredPaths, deleted: files.deletedPaths }).toEqual({ restored, deleted });
    expect(filesIn(workspace)).toEqual({ "README.md": "# demo\n", "src/app.txt": "hello\n" });

    // Undone, then Restore All of the same message: the same files in the same order.
    await clients.checkpoints.restore({ taskId, checkpointId: files.undoCheckpointId, mode: RestoreMode.FILES });
    expect(Object.keys(filesIn(workspace)).sort()).toEqual([...restored, ...deleted].sort());
    const all = await clients.checkpoints.editMessage({
      taskId,
      messageId: first.id,
      text: "Write other files",
      mode: EditMessageMode.RESTORE_ALL,
    });
    expect({ restored: all.restoredPaths, deleted: all.deletedPaths }).toEqual({ restored, deleted });
    expect(filesIn(workspace)).toEqual({ "README.md": "# demo\n", "src/app.txt": "hello\n" });
    await events.stop();
  });

  it("refuses to edit a message the person did not send (the model's, a tool's) and changes nothing", async () => {
    const { sidecars, workspace, profileId, roots } = await openWindows(scope, 1, [
      write("notes.txt", "one\n"),
      complete("Wrote notes."),
    ]);
    const [{ clients }] = sidecars;
    await setAutoApproval(clients, { editFiles: true, readFiles: true });
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "Write notes", profileId });
    const events = watch(clients, taskId);
    await events.completedAfter(0n);
    const state = async () => ({
      files: filesIn(workspace),
      messages: (await clients.tasks.getTask({ taskId })).messages,
      checkpoints: (await clients.checkpoints.listCheckpoints({ taskId })).checkpoints,
      refs: shadowRefs(roots.docsDir),
    });
    const before = await state();
    const notSent = before.messages.filter((m) => m.role !== MessageRole.USER);
    expect(notSent.map((m) => m.kind)).toEqual(expect.arrayContaining(["tool", "completion"]));
    for (const m of notSent) {
      for (const mode of [EditMessageMode.RESTORE_CHAT, EditMessageMode.RESTORE_ALL]) {
        for (const dryRun of [true, false]) {
          const refused = await clients.checkpoints
            .editMessage({ taskId, messageId: m.id, text: "Write other notes", mode, dryRun })
            .then(
              () => undefined,
              (e: unknown) => ConnectError.from(e),
            );
          expect(refused?.code, `${m.kind} ${mode} ${dryRun}`).toBe(Code.InvalidArgument);
          expect(refused?.rawMessage).toMatch(/only a message you sent can be edited/i);
        }
      }
    }
    expect(await state()).toEqual(before);
    await events.stop();
  });
});
