/**
 * A files restore whose sidecar is stopped while it writes the workspace (a `dline restore`
 * killed: its sidecar has only the stop's short time left) leaves the files part-way between
 * two checkpoints. Before, nothing ever said so: the listing showed one more "before restore"
 * checkpoint and the task as it was (a bug hunt in a terminal). Now the next process that opens
 * the workspace's checkpoints says the restore was cut short and how to finish or undo it (the
 * workspace's status, and `dline checkpoints`/`dline compare` on stderr), until the task is
 * restored again. Real sidecar processes, killed with SIGKILL; real git; scripted model server.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { CheckpointKind, CheckpointState, RestoreMode } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { TaskStatus, type TaskEvent } from "../../core/src/gen/dline/v1/task_pb.js";
import { SettingsScope } from "../../core/src/gen/dline/v1/settings_pb.js";
import type { DlineClients } from "../../core/src/client/index.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { repoRoot, type RunningSidecar } from "../helpers/sidecar.js";
import { cliEnv } from "../helpers/cli-child.js";
import { setAutoApproval } from "../runtime/harness.js";
import { openWindows, readIn, watch } from "../tasks/follow-helpers.js";

const scope = scopedSidecars();
const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");
const FILES = 3000;

/** The marker a restore leaves in the shadow repository while it writes (restore-marker.ts). */
function markerIn(docsDir: string): string | undefined {
  const dir = path.join(docsDir, "checkpoints");
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    const file = path.join(dir, name, ".git", "dline-restore-under-way.json");
    if (fs.existsSync(file)) return file;
  }
  return undefined;
}

/** Restores the files to `checkpointId` again: done, the marker gone, and the status plain ready. */
async function restoreAgainEndsIt(clients: DlineClients, taskId: string, checkpointId: string, docsDir: string) {
  const again = await clients.checkpoints.restore({ taskId, checkpointId, mode: RestoreMode.FILES });
  expect(again.filesRestored).toBe(true);
  expect(markerIn(docsDir)).toBeUndefined();
  expect((await clients.checkpoints.getStatus({ taskId })).message).toBe("Checkpoints are ready.");
}

/** A task whose command changed FILES files, run in `window`: its id and baseline. */
async function taskThatChangedFiles(window: RunningSidecar, workspace: string, profileId: string) {
  for (let i = 1; i <= FILES; i++) fs.writeFileSync(path.join(workspace, `f${i}.txt`), `original ${i}\n`);
  await setAutoApproval(window.clients, { executeSafeCommands: true, executeAllCommands: true });
  const { taskId } = await window.clients.tasks.newTask({ workspaceRoot: workspace, text: "Change them", profileId });
  const events = watch(window.clients, taskId);
  await events.status(TaskStatus.COMPLETED);
  await events.stop();
  expect(readIn(workspace, `f${FILES}.txt`)).toBe("changed\n");
  const { checkpoints } = await window.clients.checkpoints.listCheckpoints({ taskId });
  return { taskId, baseline: checkpoints.find((c) => c.kind === CheckpointKind.BASELINE)! };
}

/** Restores the files to `checkpointId` in `window`, whose sidecar is killed as soon as it writes files (the marker is there). */
async function cutRestore(window: RunningSidecar, taskId: string, checkpointId: string, docsDir: string) {
  const restoring = window.clients.checkpoints
    .restore({ taskId, checkpointId, mode: RestoreMode.FILES })
    .catch((err: Error) => err);
  await new Promise<void>((resolve, reject) => {
    const started = Date.now();
    const poll = setInterval(() => {
      if (markerIn(docsDir)) {
        clearInterval(poll);
        window.process.child.kill("SIGKILL");
        resolve();
      } else if (Date.now() - started > 60_000) {
        clearInterval(poll);
        reject(new Error("the restore never began"));
      }
    }, 1);
  });
  expect(await restoring).toBeInstanceOf(Error);
  await window.process.exited;
  expect(markerIn(docsDir)).toBeDefined();
}

/** The status names the listed "before restore" checkpoint (saved before the marker was written). */
async function saysCutShortNamingUndo(clients: DlineClients, taskId: string) {
  const said = await clients.checkpoints.getStatus({ taskId });
  expect(said.state).toBe(CheckpointState.READY);
  expect(said.message).toContain("A restore of the files to the task's start was cut short");
  const listedNow = (await clients.checkpoints.listCheckpoints({ taskId })).checkpoints;
  const undo = listedNow.find((c) => c.kind === CheckpointKind.BEFORE_RESTORE);
  expect(undo).toBeDefined();
  expect(said.message).toContain(
    `restore the "before restore" checkpoint ${undo!.id.slice(0, 12)} saved just before it`,
  );
}

/** `promise`, or a failure saying `what` after 20 s (an event that never comes fails the test soon). */
async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(what)), 20_000);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

const changeTurns = [
  {
    toolCalls: [
      {
        name: "execute_command",
        input: { command: `for i in $(seq 1 ${FILES}); do echo changed > f$i.txt; done`, requires_approval: false },
      },
    ],
  },
  { toolCalls: [{ name: "attempt_completion", input: { result: "Changed them." } }] },
];

describe("a files restore cut short by its process's end", () => {
  it("is said by the next process until the task is restored again, which finishes it", async () => {
    const { sidecars, workspace, profileId, roots } = await openWindows(scope, 1, changeTurns);
    const [first] = sidecars;
    const { taskId, baseline } = await taskThatChangedFiles(first, workspace, profileId);
    await cutRestore(first, taskId, baseline.id, roots.docsDir);

    const second = await scope.sidecar(roots);
    // It names the undo checkpoint, which is listed: the marker is written once that is on disk.
    await saysCutShortNamingUndo(second.clients, taskId);
    // The terminal says it too, before the listing and the comparison it bears on.
    const env = cliEnv(roots, { url: "http://127.0.0.1:9" });
    const listed = await run(cli, ["checkpoints", taskId], { env });
    expect(listed.stderr).toContain("was cut short");
    const compared = await run(cli, ["compare", taskId, baseline.id], { env });
    expect(compared.stderr).toContain("was cut short");

    // Restored again: the files are the baseline's, and nothing more is said.
    await restoreAgainEndsIt(second.clients, taskId, baseline.id, roots.docsDir);
    expect(readIn(workspace, "f1.txt")).toBe("original 1\n");
    expect(readIn(workspace, `f${FILES}.txt`)).toBe(`original ${FILES}\n`);
    const after = await run(cli, ["checkpoints", taskId], { env });
    expect(after.stderr).not.toContain("cut short");
  });

  it("is said by a window that looked before another window's restore was cut short", async () => {
    // Each process read the marker once: a window open on the task, whose status said
    // "ready" before another window's restore began, kept saying so after that window was
    // killed part-way, and never cleared the marker its own saves made stale.
    const { sidecars, workspace, profileId, roots } = await openWindows(scope, 2, changeTurns);
    const [first, second] = sidecars;
    const { taskId, baseline } = await taskThatChangedFiles(first, workspace, profileId);
    await first.stop();
    // An editor open on the task meanwhile (its sidecar has it loaded), and a restore run from
    // another process (a terminal's `dline restore`), killed while it writes.
    const followed = watch(second.clients, taskId);
    await followed.status(TaskStatus.COMPLETED);
    expect((await second.clients.checkpoints.getStatus({ taskId })).message).toBe("Checkpoints are ready.");
    await cutRestore(await scope.sidecar(roots), taskId, baseline.id, roots.docsDir);

    // Listing the checkpoints there tells its clients (the task's events), without a status asked.
    await second.clients.checkpoints.listCheckpoints({ taskId });
    const told = await within(
      followed.until((e) => e.event.case === "checkpointStatus" && e.event.value.message.includes("was cut short")),
      "no checkpointStatus event said the restore was cut short",
    );
    expect(told.event.value).toMatchObject({ state: "CHECKPOINT_STATE_READY" });
    await followed.stop();
    await saysCutShortNamingUndo(second.clients, taskId);
    await restoreAgainEndsIt(second.clients, taskId, baseline.id, roots.docsDir);
    expect(readIn(workspace, `f${FILES}.txt`)).toBe(`original ${FILES}\n`);
  });

  it("is told to the window that ran the task and followed the killed restore", async () => {
    // VS Code, open on the task it had run, was never told: its stream had followed the
    // restoring process, which showed it a seq at the top of this window's reservation, and
    // this window's copy then went on from its own last seq, below it, so the event was skipped.
    const { sidecars, workspace, profileId, roots } = await openWindows(scope, 1, changeTurns);
    const [first] = sidecars;
    const { taskId, baseline } = await taskThatChangedFiles(first, workspace, profileId);
    const followed = watch(first.clients, taskId);
    await followed.status(TaskStatus.COMPLETED);
    await cutRestore(await scope.sidecar(roots), taskId, baseline.id, roots.docsDir);

    await first.clients.checkpoints.listCheckpoints({ taskId });
    const saidCut = (e: TaskEvent) =>
      e.event.case === "checkpointStatus" && e.event.value.message.includes("was cut short");
    const told = await within(followed.until(saidCut), "no checkpointStatus event said the restore was cut short");
    expect(told.event.value).toMatchObject({ state: "CHECKPOINT_STATE_READY" });
    await followed.stop();
    // A window that opens the task now reads it in order, the note last.
    const fromStart = watch(first.clients, taskId);
    const last = await within(fromStart.until(saidCut), "a new subscriber was not told the restore was cut short");
    await fromStart.stop();
    const seqs = fromStart.events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => (a < b ? -1 : 1)));
    expect(last.seq).toBe(told.seq);

    // The restore run again from another terminal: its event comes through this window too
    // (the note's seq was reserved for this window, so that process starts above it).
    const again = watch(first.clients, taskId, told.seq);
    const terminal = await scope.sidecar(roots);
    await restoreAgainEndsIt(terminal.clients, taskId, baseline.id, roots.docsDir);
    const restored = await within(
      again.until((e) => e.event.case === "filesRestored"),
      "the window did not hear of the files restored again",
    );
    expect(restored.seq).toBeGreaterThan(told.seq);
    await again.stop();
  });

  it("is not told by a listing where checkpoints are off, and is once they are on again", async () => {
    const { sidecars, workspace, profileId, roots } = await openWindows(scope, 2, [
      { toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "by the task\n" } }] },
      { toolCalls: [{ name: "attempt_completion", input: { result: "Wrote it." } }] },
    ]);
    const [first, second] = sidecars;
    await setAutoApproval(first.clients, { editFiles: true });
    const { taskId } = await first.clients.tasks.newTask({ workspaceRoot: workspace, text: "Write it", profileId });
    const events = watch(first.clients, taskId);
    await events.status(TaskStatus.COMPLETED);
    await events.stop();
    await first.stop();
    const gitDirs = fs.readdirSync(path.join(roots.docsDir, "checkpoints"));
    fs.writeFileSync(path.join(roots.docsDir, "checkpoints", gitDirs[0]!, ".git", "dline-restore-under-way.json"), "");

    const followed = watch(second.clients, taskId);
    await followed.status(TaskStatus.COMPLETED);
    await second.clients.settings.updateSettings({ scope: SettingsScope.GLOBAL, patch: { checkpointsEnabled: false } });
    await second.clients.checkpoints.listCheckpoints({ taskId });
    expect((await second.clients.checkpoints.getStatus({ taskId })).state).toBe(CheckpointState.DISABLED);
    const saidCut = (e: TaskEvent) =>
      e.event.case === "checkpointStatus" && e.event.value.message.includes("was cut short");
    expect(followed.events.filter(saidCut)).toEqual([]);

    await second.clients.settings.updateSettings({ scope: SettingsScope.GLOBAL, patch: { checkpointsEnabled: true } });
    await second.clients.checkpoints.listCheckpoints({ taskId });
    const told = await within(followed.until(saidCut), "no checkpointStatus event said the restore was cut short");
    expect(told.event.value).toMatchObject({ state: "CHECKPOINT_STATE_READY" });
    await followed.stop();
  });

  it("is said from a marker left empty (its writer killed between creating and writing it), until a restore or a save", async () => {
    // The CI run of 3b76d80a: the kill landed between the marker's creation and its write, and
    // the next process said nothing of the restore. A marker is now written whole and renamed;
    // one that cannot be read still says that a restore was under way.
    const { sidecars, workspace, profileId, roots } = await openWindows(scope, 1, [
      { toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "by the task\n" } }] },
      { toolCalls: [{ name: "attempt_completion", input: { result: "Wrote it." } }] },
      { toolCalls: [{ name: "attempt_completion", input: { result: "Nothing to do." } }] },
    ]);
    fs.writeFileSync(path.join(workspace, "notes.txt"), "the person's\n");
    const [first] = sidecars;
    await setAutoApproval(first.clients, { editFiles: true });
    const { taskId } = await first.clients.tasks.newTask({ workspaceRoot: workspace, text: "Write it", profileId });
    const events = watch(first.clients, taskId);
    await events.status(TaskStatus.COMPLETED);
    await events.stop();
    const { checkpoints } = await first.clients.checkpoints.listCheckpoints({ taskId });
    const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE)!;
    await first.stop();
    const gitDirs = fs.readdirSync(path.join(roots.docsDir, "checkpoints"));
    expect(gitDirs).toHaveLength(1);
    const marker = path.join(roots.docsDir, "checkpoints", gitDirs[0]!, ".git", "dline-restore-under-way.json");
    fs.writeFileSync(marker, "");

    const second = await scope.sidecar(roots);
    const said = await second.clients.checkpoints.getStatus({ taskId });
    expect(said.state).toBe(CheckpointState.READY);
    expect(said.message).toContain("A restore of the files to a checkpoint was cut short");
    await restoreAgainEndsIt(second.clients, taskId, baseline.id, roots.docsDir);
    expect(readIn(workspace, "notes.txt")).toBe("the person's\n");

    // Which task it was is unknown: any task's next checkpoint takes the files as they are.
    await second.stop();
    fs.writeFileSync(marker, "{");
    const third = await scope.sidecar(roots);
    expect((await third.clients.checkpoints.getStatus({ taskId })).message).toContain("was cut short");
    const next = await third.clients.tasks.newTask({ workspaceRoot: workspace, text: "Anything?", profileId });
    const nextEvents = watch(third.clients, next.taskId);
    await nextEvents.status(TaskStatus.COMPLETED);
    await nextEvents.stop();
    expect(markerIn(roots.docsDir)).toBeUndefined();
    expect((await third.clients.checkpoints.getStatus({ taskId: next.taskId })).message).toBe("Checkpoints are ready.");
  });
});
