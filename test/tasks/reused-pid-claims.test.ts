/**
 * A task claim (`tasks/<id>/owner.lock`) left by a killed sidecar whose pid now belongs to
 * another process: after a reboot (pids restart low, a container's processes get the same pids
 * each start) or after the pids wrapped. The claim records the owner's boot and start time, so
 * the real sidecar takes such a claim over instead of refusing the task forever as "running in
 * another Dline window", while a live owner's claim is still respected.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { DeleteMode } from "../../core/src/gen/dline/v1/task_pb.js";
import { uiMessage } from "../../core/src/tasks/message-store.js";
import { startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import { buildChild, exited, lineCollector, openStorage, runChild, taskEnv, type TaskEnv } from "./helpers.js";

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function sidecarOn(env: TaskEnv): Promise<RunningSidecar> {
  const s = await startSidecar({ roots: env.roots });
  cleanup.push(() => s.stop());
  return s;
}

async function seed(env: TaskEnv, ids: string[]) {
  const local = await openStorage(env);
  for (const id of ids) {
    const t = local.store.create({ id, title: `task ${id}`, workspaceRoot: "/ws" });
    t.files.messages.append(uiMessage({ id: "m-seed", text: "seed" }));
    t.release();
  }
  await local.close();
}

/** A process of someone else's that lives for the test: it will hold the dead owner's pid. */
function unrelatedProcess(): ChildProcess {
  const child = spawn("sleep", ["120"], { stdio: "ignore" });
  cleanup.push(async () => {
    child.kill("SIGKILL");
    await exited(child);
  });
  return child;
}

/** A claim written by a real process (the task-worker child), which is then SIGKILLed. */
async function claimOfKilledOwner(env: TaskEnv, taskId: string): Promise<Record<string, unknown>> {
  const child = runChild(await buildChild("task-worker"), ["claim", env.layout.roots.documentsRoot, taskId]);
  const lines = lineCollector(child);
  await lines.waitFor((l) => l.some((x) => x.startsWith("claimed")));
  child.kill("SIGKILL");
  await exited(child);
  return JSON.parse(fs.readFileSync(env.layout.task(taskId).ownerLock, "utf8")) as Record<string, unknown>;
}

describe("a stale task claim whose pid was reused", () => {
  it("is taken over by the sidecar: the task reads as unowned and can be deleted", async () => {
    const env = taskEnv();
    await seed(env, ["t1", "t2"]);
    const lock = env.layout.task("t1").ownerLock;
    const claim = await claimOfKilledOwner(env, "t1");
    // The dead owner's pid now belongs to an unrelated live process.
    const other = unrelatedProcess();
    fs.writeFileSync(lock, JSON.stringify({ ...claim, pid: other.pid }));
    // And t2 was claimed before a reboot: the same pid, another boot.
    fs.writeFileSync(
      env.layout.task("t2").ownerLock,
      JSON.stringify({ ...claim, pid: other.pid, bootId: "00000000-0000-4000-8000-000000000000" }),
    );

    const sidecar = await sidecarOn(env);
    expect((await sidecar.clients.tasks.getTask({ taskId: "t1" })).ownerPid).toBe(0);
    expect((await sidecar.clients.tasks.getTask({ taskId: "t2" })).ownerPid).toBe(0);
    await sidecar.clients.tasks.deleteTasks({ taskIds: ["t1", "t2"], mode: DeleteMode.SELECTED });
    expect((await sidecar.clients.history.listTasks({})).tasks.map((t) => t.id)).toEqual([]);
    expect(fs.existsSync(env.layout.task("t1").dir)).toBe(false);
    expect(fs.existsSync(env.layout.task("t2").dir)).toBe(false);
    expect(other.exitCode).toBeNull(); // the unrelated process was left alone
  });

  it("a live owner's claim is still respected", async () => {
    const env = taskEnv();
    await seed(env, ["t1"]);
    const owner = await liveOwnerOf(env, "t1");
    const sidecar = await sidecarOn(env);
    expect((await sidecar.clients.tasks.getTask({ taskId: "t1" })).ownerPid).toBe(owner.pid);
    const err = await sidecar.clients.tasks
      .deleteTasks({ taskIds: ["t1"], mode: DeleteMode.SELECTED })
      .then(() => undefined, ConnectError.from);
    expect(err?.code).toBe(Code.FailedPrecondition);
    expect(fs.existsSync(env.layout.task("t1").messagesDb)).toBe(true);
  });
});

/** A live process of ours that claims the task (killed after the test). */
async function liveOwnerOf(env: ReturnType<typeof taskEnv>, taskId: string) {
  const owner = runChild(await buildChild("task-worker"), ["claim", env.layout.roots.documentsRoot, taskId]);
  cleanup.push(async () => {
    owner.kill("SIGKILL");
    await exited(owner);
  });
  await lineCollector(owner).waitFor((l) => l.some((x) => x.startsWith("claimed")));
  return owner;
}

describe("an interrupted deletion whose sidecar's pid was reused", () => {
  it("is finished by the next sidecar: the journal's owner is judged by its boot and start time, not its pid alone", async () => {
    const env = taskEnv();
    await seed(env, ["t1", "t2", "t3"]);
    const claim = await claimOfKilledOwner(env, "t1"); // a real owner's identity (the child is dead now)
    fs.rmSync(env.layout.task("t1").ownerLock);
    // The dead deleter's pid now belongs to an unrelated live process.
    const other = unrelatedProcess();
    const entry = { workspaceRoot: "/ws", pid: other.pid, hostname: claim.hostname, at: Date.now() };
    fs.writeFileSync(
      env.layout.pendingDeletionsJson,
      JSON.stringify({
        version: 1,
        tasks: [
          { ...entry, taskId: "t1", bootId: claim.bootId, startTicks: claim.startTicks },
          // Written before a reboot: the same pid, another boot.
          { ...entry, taskId: "t2", bootId: "00000000-0000-4000-8000-000000000000", startTicks: claim.startTicks },
        ],
        allTasks: null,
      }),
    );

    const sidecar = await sidecarOn(env);
    expect((await sidecar.clients.history.listTasks({})).tasks.map((t) => t.id)).toEqual(["t3"]);
    expect(fs.existsSync(env.layout.task("t1").dir)).toBe(false);
    expect(fs.existsSync(env.layout.task("t2").dir)).toBe(false);
    expect(fs.existsSync(env.layout.pendingDeletionsJson)).toBe(false);
    expect(other.exitCode).toBeNull();
  });

  it("a live deleter's entry is left to it", async () => {
    const env = taskEnv();
    await seed(env, ["t1"]);
    const owner = await liveOwnerOf(env, "t1");
    const claim = JSON.parse(fs.readFileSync(env.layout.task("t1").ownerLock, "utf8")) as Record<string, unknown>;
    const { since: _since, purpose: _purpose, ...identity } = claim;
    fs.writeFileSync(
      env.layout.pendingDeletionsJson,
      JSON.stringify({
        version: 1,
        tasks: [{ ...identity, taskId: "t1", workspaceRoot: "/ws", at: Date.now() }],
        allTasks: null,
      }),
    );
    const sidecar = await sidecarOn(env);
    expect((await sidecar.clients.history.listTasks({})).tasks.map((t) => t.id)).toEqual(["t1"]);
    expect(fs.existsSync(env.layout.task("t1").messagesDb)).toBe(true);
    expect(JSON.parse(fs.readFileSync(env.layout.pendingDeletionsJson, "utf8")).tasks[0].pid).toBe(owner.pid);
  });
});
