/**
 * A restore of the task that is running, asked in its own window or another: the run is stopped,
 * and has ended (its command killed, its last turn saved), before any file is restored. Before,
 * the files were restored first and the run stopped after (Files & Task), or not at all (Files):
 * the command went on writing over the restored workspace, and the window running the task read
 * a bare "cancelled".
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { CheckpointKind, EditMessageMode, RestoreMode } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { AskKind, TaskStatus, ToolCallStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { setAutoApproval } from "../runtime/harness.js";
import { openWindows, readIn, watch } from "./follow-helpers.js";

const scope = scopedSidecars();

/** A command that appends to ticks.txt every few milliseconds for a minute. */
const TICKING =
  "end=$(( $(date +%s) + 60 )); while [ $(date +%s) -lt $end ]; do echo tick >> ticks.txt; sleep 0.005; done";

const turns = [
  { toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "from the task\n" } }] },
  { toolCalls: [{ name: "execute_command", input: { command: TICKING, requires_approval: false } }] },
  { toolCalls: [{ name: "attempt_completion", input: { result: "Done." } }] },
];

/** Waits until the command has written a few ticks. */
async function ticking(workspace: string): Promise<void> {
  const file = path.join(workspace, "ticks.txt");
  for (let i = 0; i < 600; i++) {
    if ((readIn(workspace, "ticks.txt") ?? "").split("\n").length > 5) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the command never wrote ${file}`);
}

/** Whether the file stays absent over a few of the command's ticks. */
async function staysAbsent(workspace: string, file: string): Promise<boolean> {
  for (let i = 0; i < 10; i++) {
    if (fs.existsSync(path.join(workspace, file))) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

describe("a restore of the task that is running", () => {
  for (const [label, mode, from] of [
    ["Files & Task, asked in another window", RestoreMode.FILES_AND_TASK, "other"],
    ["Files only, asked in the window running it", RestoreMode.FILES, "owner"],
  ] as const) {
    it(`${label}: stops the run before restoring, and nothing writes after it`, async () => {
      const { sidecars, workspace, profileId } = await openWindows(scope, 2, turns);
      const [owner, other] = sidecars;
      await setAutoApproval(owner.clients, {
        editFiles: true,
        readFiles: true,
        executeSafeCommands: true,
        executeAllCommands: true,
      });
      const { taskId } = await owner.clients.tasks.newTask({ workspaceRoot: workspace, text: "Tick", profileId });
      const stream = watch(owner.clients, taskId);
      await ticking(workspace);
      expect(readIn(workspace, "notes.txt")).toBe("from the task\n");

      const asking = from === "owner" ? owner : other;
      const { checkpoints } = await asking.clients.checkpoints.listCheckpoints({ taskId });
      const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE)!;
      const outcome = await asking.clients.checkpoints.restore({ taskId, checkpointId: baseline.id, mode });

      expect(outcome).toMatchObject({ filesRestored: true, fileError: "", runStopped: true });
      expect(outcome.deletedPaths).toEqual(["notes.txt", "ticks.txt"]);
      // The command was stopped before the restore: nothing it writes comes back after it.
      expect(await staysAbsent(workspace, "ticks.txt")).toBe(true);
      expect(readIn(workspace, "notes.txt")).toBeUndefined();

      // The window running the task says why it stopped (once the restore is done); Resume goes
      // on from there.
      const ended = await stream.ended();
      const why =
        mode === RestoreMode.FILES
          ? "stopped for a restore to the task's start"
          : "the conversation was restored to an earlier point";
      expect(ended.event).toMatchObject({
        case: "statusChanged",
        value: { status: TaskStatus.INTERRUPTED, reason: why },
      });
      if (mode === RestoreMode.FILES) {
        // The command's row (the last call, after the write's) says why it ended.
        const finished = stream.events.filter((e) => e.event.case === "toolFinished").at(-1);
        expect(finished?.event.value).toMatchObject({
          status: ToolCallStatus.INTERRUPTED,
          reason: "The task was stopped for a restore to the task's start before this call finished.",
        });
      }
      // The stopped turn's save came before the restore: the last file checkpoint is the undo point.
      const after = await asking.clients.checkpoints.listCheckpoints({ taskId });
      expect(after.checkpoints.at(-1)?.kind).toBe(CheckpointKind.BEFORE_RESTORE);
      expect(after.checkpoints.at(-1)?.id).toBe(outcome.undoCheckpointId);
      await stream.stop();
    });
  }

  for (const from of ["owner", "other"] as const) {
    it(`Compare while the task's command runs (asked in the ${from === "owner" ? "window running it" : "other window"}) names what the command writes among the files a restore changes, as the restore then does`, async () => {
      const { sidecars, workspace, profileId } = await openWindows(scope, 2, turns);
      const [owner, other] = sidecars;
      await setAutoApproval(owner.clients, {
        editFiles: true,
        readFiles: true,
        executeSafeCommands: true,
        executeAllCommands: true,
      });
      const { taskId } = await owner.clients.tasks.newTask({ workspaceRoot: workspace, text: "Tick", profileId });
      const stream = watch(owner.clients, taskId);
      await ticking(workspace);
      const asking = from === "owner" ? owner : other;
      const { checkpoints } = await asking.clients.checkpoints.listCheckpoints({ taskId });
      // The checkpoint after the write: the command's ticks.txt is its only change since.
      const afterWrite = checkpoints.find((c) => c.kind === CheckpointKind.TURN)!;
      expect(afterWrite).toBeDefined();
      const compared = await asking.clients.checkpoints.compare({ taskId, checkpointId: afterWrite.id });
      expect(compared.files.map((f) => f.path)).toEqual(["ticks.txt"]);
      // Before: [] (the running command's row was not among the commands that ran), so VS Code's
      // confirmation said ticks.txt would stay as it is "(not changed by this task)".
      expect(compared.restorePaths).toEqual(["ticks.txt"]);
      // Restore All's dry run (of the first message: the baseline) names it as Compare does.
      const first = (await asking.clients.tasks.getTask({ taskId })).messages[0]!;
      const dry = await asking.clients.checkpoints.editMessage({
        taskId,
        messageId: first.id,
        text: "Tick, edited",
        mode: EditMessageMode.RESTORE_ALL,
        dryRun: true,
      });
      expect(dry.deletedPaths).toEqual(["notes.txt", "ticks.txt"]);
      expect(readIn(workspace, "ticks.txt")).toBeDefined();

      // The restore then does what Compare said: the run stopped, ticks.txt deleted.
      const outcome = await asking.clients.checkpoints.restore({
        taskId,
        checkpointId: afterWrite.id,
        mode: RestoreMode.FILES,
      });
      expect(outcome).toMatchObject({ filesRestored: true, runStopped: true, deletedPaths: ["ticks.txt"] });
      expect(readIn(workspace, "notes.txt")).toBe("from the task\n");
      await stream.stop();
    });
  }

  it("a command still waiting for approval when a restore stops the task is said never to have run", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 2, [
      turns[0]!,
      { toolCalls: [{ name: "execute_command", input: { command: "echo ran > ran.txt", requires_approval: true } }] },
    ]);
    const [owner, other] = sidecars;
    await setAutoApproval(owner.clients, { editFiles: true, readFiles: true });
    const { taskId } = await owner.clients.tasks.newTask({ workspaceRoot: workspace, text: "Ask", profileId });
    const stream = watch(owner.clients, taskId);
    await stream.ask(AskKind.COMMAND_APPROVAL);
    const { checkpoints } = await other.clients.checkpoints.listCheckpoints({ taskId });
    const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE)!;
    const outcome = await other.clients.checkpoints.restore({
      taskId,
      checkpointId: baseline.id,
      mode: RestoreMode.FILES,
    });
    expect(outcome).toMatchObject({ filesRestored: true, runStopped: true });
    await stream.ended();
    const finished = stream.events.filter((e) => e.event.case === "toolFinished").at(-1);
    // Before: "…before this call finished", of a command that never started.
    expect(finished?.event.value).toMatchObject({
      status: ToolCallStatus.INTERRUPTED,
      reason:
        "The task was stopped for a restore to the task's start while this call waited for approval: nothing ran.",
    });
    expect(readIn(workspace, "ran.txt")).toBeUndefined();
    await stream.stop();
  });

  it("Restore All of an edited message while the command runs stops the run first and says so", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 1, turns);
    const [owner] = sidecars;
    await setAutoApproval(owner.clients, {
      editFiles: true,
      readFiles: true,
      executeSafeCommands: true,
      executeAllCommands: true,
    });
    const { taskId } = await owner.clients.tasks.newTask({ workspaceRoot: workspace, text: "Tick", profileId });
    const stream = watch(owner.clients, taskId);
    await ticking(workspace);
    const first = (await owner.clients.tasks.getTask({ taskId })).messages[0]!;
    const edited = await owner.clients.checkpoints.editMessage({
      taskId,
      messageId: first.id,
      text: "Tick, edited",
      mode: EditMessageMode.RESTORE_ALL,
    });
    expect(edited).toMatchObject({ restored: true, fileError: "", runStopped: true });
    expect(await staysAbsent(workspace, "ticks.txt")).toBe(true);
    expect(readIn(workspace, "notes.txt")).toBeUndefined();
    await stream.stop();
  });

  it("a restore of a task that is not running stops nothing", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 1, [
      turns[0]!,
      { toolCalls: [{ name: "attempt_completion", input: { result: "Done." } }] },
    ]);
    const [owner] = sidecars;
    await setAutoApproval(owner.clients, { editFiles: true, readFiles: true });
    const { taskId } = await owner.clients.tasks.newTask({ workspaceRoot: workspace, text: "Write", profileId });
    await watch(owner.clients, taskId).status(TaskStatus.COMPLETED);
    const { checkpoints } = await owner.clients.checkpoints.listCheckpoints({ taskId });
    const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE)!;
    const outcome = await owner.clients.checkpoints.restore({
      taskId,
      checkpointId: baseline.id,
      mode: RestoreMode.FILES,
    });
    expect(outcome).toMatchObject({ filesRestored: true, runStopped: false, deletedPaths: ["notes.txt"] });
  });
});
