/**
 * What the person changes between two runs of a task (a file made, an edit, while the task
 * stands completed or after a Task Only restore) is theirs, not the task's, when the next run
 * runs a command. Before, the command's changes were measured from the task's last checkpoint,
 * so they took in the person's: Compare no longer marked them "a files restore leaves it as it
 * is", a files restore deleted the person's new file and reverted their edit, and it left the
 * file the command made (found in Neovim by a bug hunt). Now a later run's first tool that may
 * modify the workspace saves it first, anchored on the run's message.
 * Real sidecar process, real git, scripted model server.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { CheckpointKind, RestoreMode } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { setAutoApproval } from "../runtime/harness.js";
import type { ModelServerScript } from "../model-server/script.js";
import { openWindows, readIn, watch } from "../tasks/follow-helpers.js";

const scope = scopedSidecars();

const write = (name: string, content: string) => ({
  toolCalls: [{ name: "write_to_file", input: { path: name, content } }],
});
const command = (line: string) => ({
  toolCalls: [{ name: "execute_command", input: { command: line, requires_approval: false } }],
});
const complete = (result: string) => ({ toolCalls: [{ name: "attempt_completion", input: { result } }] });

async function setUp(turns: ModelServerScript["turns"]) {
  const { sidecars, workspace, profileId } = await openWindows(scope, 1, turns);
  const [window] = sidecars;
  await setAutoApproval(window.clients, {
    editFiles: true,
    readFiles: true,
    executeSafeCommands: true,
    executeAllCommands: true,
  });
  fs.writeFileSync(path.join(workspace, "base.txt"), "base\n");
  const { taskId } = await window.clients.tasks.newTask({ workspaceRoot: workspace, text: "Write a", profileId });
  const events = watch(window.clients, taskId);
  await events.status(TaskStatus.COMPLETED);
  // The person's own work while the task stands completed.
  fs.writeFileSync(path.join(workspace, "after.txt"), "mine\n");
  fs.appendFileSync(path.join(workspace, "base.txt"), "my line\n");
  return { clients: window.clients, workspace, taskId, events };
}

describe("the person's changes between two runs of a task", () => {
  it("a command of the next run: Compare leaves them alone, a files restore to the baseline keeps them and takes away what the command made", async () => {
    const { clients, workspace, taskId, events } = await setUp([
      write("a.txt", "a\n"),
      complete("Wrote a."),
      command("echo r > r.txt"),
      complete("Ran it."),
    ]);
    const seen = events.lastSeq();
    await clients.tasks.sendMessage({ taskId, text: "now run it" });
    await events.completedAfter(seen);
    expect(readIn(workspace, "r.txt")).toBe("r\n");

    const { checkpoints } = await clients.checkpoints.listCheckpoints({ taskId });
    const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE)!;
    const compared = await clients.checkpoints.compare({ taskId, checkpointId: baseline.id });
    expect(compared.files.map((f) => f.path).sort()).toEqual(["a.txt", "after.txt", "base.txt", "r.txt"]);
    expect([...compared.restorePaths].sort()).toEqual(["a.txt", "r.txt"]);

    const res = await clients.checkpoints.restore({ taskId, checkpointId: baseline.id, mode: RestoreMode.FILES });
    expect([...res.deletedPaths].sort()).toEqual(["a.txt", "r.txt"]);
    expect(readIn(workspace, "after.txt")).toBe("mine\n");
    expect(readIn(workspace, "base.txt")).toBe("base\nmy line\n");
    expect(readIn(workspace, "r.txt")).toBeUndefined();
    expect(readIn(workspace, "a.txt")).toBeUndefined();
    // The next run's message has a checkpoint of its own: the files as they were when it was sent.
    const { messages } = await clients.tasks.getTask({ taskId });
    const message = messages.find((m) => m.text === "now run it")!;
    const atMessage = checkpoints.find((c) => c.messageId === message.id && c.kind === CheckpointKind.TURN);
    expect(atMessage).toBeDefined();
    // It and the baseline are told as they are saved, and kept on their messages for a reopened
    // task. Before: neither was (a Neovim chat had no marker for them; ACP sent no notification).
    const saved = events.events.flatMap((e) => (e.event.case === "checkpointSaved" ? [e.event.value] : []));
    const first = messages[0]!;
    expect(saved).toContainEqual(
      expect.objectContaining({ checkpointId: baseline.id, messageId: first.id, kind: "CHECKPOINT_KIND_BASELINE" }),
    );
    expect(saved).toContainEqual(
      expect.objectContaining({ checkpointId: atMessage!.id, messageId: message.id, kind: "CHECKPOINT_KIND_TURN" }),
    );
    expect([first.checkpointId, message.checkpointId]).toEqual([baseline.id, atMessage!.id]);
    await events.stop();
  });

  it("a Resume after a Task Only restore: the person's changes made meanwhile stay theirs", async () => {
    const { clients, workspace, taskId, events } = await setUp([
      write("a.txt", "a\n"),
      write("b.txt", "b\n"),
      complete("Wrote a and b."),
      command("echo resumed > resumed.txt"),
      complete("Resumed."),
    ]);
    const { checkpoints } = await clients.checkpoints.listCheckpoints({ taskId });
    const afterA = checkpoints.filter((c) => c.kind === CheckpointKind.TURN)[0]!;
    await clients.checkpoints.restore({ taskId, checkpointId: afterA.id, mode: RestoreMode.TASK });
    const seen = (await clients.tasks.getTask({ taskId })).lastSeq;
    await clients.tasks.resume({ taskId });
    await events.completedAfter(seen);
    expect(readIn(workspace, "resumed.txt")).toBe("resumed\n");

    const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE)!;
    const res = await clients.checkpoints.restore({ taskId, checkpointId: baseline.id, mode: RestoreMode.FILES });
    expect([...res.deletedPaths].sort()).toEqual(["a.txt", "b.txt", "resumed.txt"]);
    expect(readIn(workspace, "after.txt")).toBe("mine\n");
    expect(readIn(workspace, "base.txt")).toBe("base\nmy line\n");
    await events.stop();
  });
});
