/**
 * A task that has finished running in a sidecar keeps no database open there, through the real
 * sidecar: its messages, journal and metrics databases are closed (so their WAL and
 * shared-memory files leave the disk), and open again when the task is shown or continued.
 * Before, every task a sidecar had run kept three connections, and their WAL files, until the
 * sidecar stopped: on a disk that filled up, those files were what filled it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { startSidecar } from "../helpers/sidecar.js";
import type { ModelServerScript } from "../model-server/script.js";
import { configureModel, followUntilDone, makeWorkspace, setAutoApproval } from "./harness.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

/** The files of the task folders `ids` (in `tasksDir`) that process `pid` holds open. */
function openTaskFiles(pid: number, tasksDir: string, ids: string[]): string[] {
  const fdDir = `/proc/${pid}/fd`;
  const open: string[] = [];
  for (const fd of fs.readdirSync(fdDir)) {
    try {
      const target = fs.readlinkSync(path.join(fdDir, fd));
      if (ids.some((id) => target.startsWith(path.join(tasksDir, id) + path.sep)))
        open.push(path.relative(tasksDir, target));
    } catch {
      // closed meanwhile
    }
  }
  return open.sort();
}

/** Waits until process `pid` holds no file of the tasks open; answers what it still holds after 20 s. */
async function waitUntilClosed(pid: number, tasksDir: string, ids: string[]): Promise<string[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const open = openTaskFiles(pid, tasksDir, ids);
    if (open.length === 0 || Date.now() > deadline) return open;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The WAL and shared-memory files left in the task folders. */
function sqliteSideFiles(tasksDir: string, ids: string[]): string[] {
  return ids.flatMap((id) =>
    fs
      .readdirSync(path.join(tasksDir, id))
      .filter((f) => f.endsWith("-wal") || f.endsWith("-shm"))
      .map((f) => `${id}/${f}`),
  );
}

/** A sidecar with a scripted model that loops over `turns`, and a project folder. */
async function sidecarWithModel(turns: ModelServerScript["turns"]) {
  const sidecar = await startSidecar();
  cleanups.push(() => sidecar.stop());
  const { server, profileId } = await configureModel(sidecar.clients, "openai", { loop: true, turns });
  cleanups.push(() => server.stop());
  return {
    sidecar,
    profileId,
    workspace: makeWorkspace(sidecar.roots.base),
    tasksDir: path.join(sidecar.roots.docsDir, "tasks"),
    pid: sidecar.process.child.pid!,
  };
}

describe("a finished task's databases", () => {
  it("are closed once the task is idle, and open again to show and continue it", async () => {
    const { sidecar, profileId, workspace, tasksDir, pid } = await sidecarWithModel([
      {
        toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "noted\n" } }],
        usage: { input: 120, output: 10 },
      },
      { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }], usage: { input: 150, output: 5 } },
    ]);
    await setAutoApproval(sidecar.clients, { editFiles: true });

    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { taskId } = await sidecar.clients.tasks.newTask({
        workspaceRoot: workspace,
        text: `task ${i}`,
        profileId,
      });
      const events = await followUntilDone(sidecar.clients, taskId);
      expect(events.at(-1)?.event.value).toMatchObject({ status: TaskStatus.COMPLETED });
      ids.push(taskId);
    }
    expect(await waitUntilClosed(pid, tasksDir, ids)).toEqual([]);
    expect(sqliteSideFiles(tasksDir, ids)).toEqual([]);

    // Shown again: the messages are read (the databases open and close again).
    for (const id of ids) {
      const { messages } = await sidecar.clients.tasks.getTask({ taskId: id });
      expect(messages.some((m) => m.text.includes("done"))).toBe(true);
    }
    expect(await waitUntilClosed(pid, tasksDir, ids)).toEqual([]);

    // Continued: the run writes to the reopened databases, and they close when it ends.
    const first = ids[0]!;
    const shown = await sidecar.clients.tasks.getTask({ taskId: first });
    const before = shown.messages.length;
    await sidecar.clients.tasks.sendMessage({ taskId: first, text: "once more" });
    const events = await followUntilDone(sidecar.clients, first, () => {}, shown.lastSeq);
    expect(events.at(-1)?.event.value).toMatchObject({ status: TaskStatus.COMPLETED });
    const after = (await sidecar.clients.tasks.getTask({ taskId: first })).messages;
    expect(after.length).toBeGreaterThan(before);
    expect(after.some((m) => m.text.includes("once more"))).toBe(true);
    expect(await waitUntilClosed(pid, tasksDir, ids)).toEqual([]);
    expect(sqliteSideFiles(tasksDir, ids)).toEqual([]);

    // Shown by another sidecar, where they are not loaded (as `dline show` does): nothing left either.
    const viewer = await startSidecar({ roots: sidecar.roots });
    cleanups.push(() => viewer.stop());
    for (const id of ids) {
      const shown = await viewer.clients.tasks.getTask({ taskId: id });
      expect(shown.messages.some((m) => m.text.includes("done"))).toBe(true);
      expect(shown.contextTokens).toBeGreaterThan(0n);
    }
    expect(await waitUntilClosed(viewer.process.child.pid!, tasksDir, ids)).toEqual([]);
    expect(sqliteSideFiles(tasksDir, ids)).toEqual([]);
  });
});

describe("a follow-up sent the moment a run completes", () => {
  it("runs, and the task's databases close after it", async () => {
    const { sidecar, profileId, workspace, tasksDir, pid } = await sidecarWithModel([
      { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
    ]);
    const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: workspace, text: "start", profileId });
    let completions = 0;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 45_000);
    try {
      for await (const res of sidecar.clients.tasks.subscribe(
        { taskId, afterSeq: 0n },
        { signal: controller.signal },
      )) {
        const e = res.event!.event;
        if (e.case !== "statusChanged") continue;
        expect(e.value.status, e.value.reason).not.toBe(TaskStatus.FAILED);
        if (e.value.status !== TaskStatus.COMPLETED) continue;
        if (++completions === 8) break;
        // At once, while the run that completed is still letting the task go.
        await sidecar.clients.tasks.sendMessage({ taskId, text: `again ${completions}` });
      }
    } finally {
      clearTimeout(timer);
    }
    expect(completions).toBe(8);
    const { messages } = await sidecar.clients.tasks.getTask({ taskId });
    expect(messages.filter((m) => m.text.startsWith("again ")).map((m) => m.text)).toEqual(
      Array.from({ length: 7 }, (_, i) => `again ${i + 1}`),
    );
    expect(await waitUntilClosed(pid, tasksDir, [taskId])).toEqual([]);
  });
});
