/**
 * A new task's workspace starts initializing its checkpoints as the task is set up (not at its
 * first request); the task still hears all of it: initializing, scanning while git's scan runs,
 * staging, ready. Real sidecar; git slowed down by a wrapper on PATH; scripted model server.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CheckpointState } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { SettingsScope } from "../../core/src/gen/dline/v1/settings_pb.js";
import { makeTestRoots, startSidecar } from "../helpers/sidecar.js";
import { gitShimBeforeStatus } from "../helpers/git-shim.js";
import { configureModel, makeWorkspace } from "./harness.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

/** A sidecar whose git status takes 1.5 s more (the scan still runs when the task starts), and a model that completes. */
async function sidecarWithSlowScan() {
  const roots = makeTestRoots();
  const PATH = gitShimBeforeStatus(path.join(roots.base, "slow-bin"), "sleep 1.5");
  const sidecar = await startSidecar({ roots, env: { PATH } });
  cleanups.push(() => sidecar.stop());
  const { server, profileId } = await configureModel(sidecar.clients, "openai", {
    turns: [{ toolCalls: [{ name: "attempt_completion", input: { result: "Done." } }] }],
  });
  cleanups.push(() => server.stop());
  return { roots, sidecar, profileId };
}

describe("checkpoints initializing while a task starts", () => {
  it("the task hears its checkpoints initialize: scanning, staging, then ready", async () => {
    const { roots, sidecar, profileId } = await sidecarWithSlowScan();
    const workspace = makeWorkspace(roots.base);
    const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: workspace, text: "Finish", profileId });
    const statuses: { state: string; phase: string }[] = [];
    for await (const res of sidecar.clients.tasks.subscribe({ taskId, afterSeq: 0n })) {
      const ev = res.event!.event;
      if (ev.case === "checkpointStatus") statuses.push({ state: ev.value.state, phase: ev.value.phase });
      if (ev.case === "statusChanged" && ev.value.status === TaskStatus.COMPLETED) break;
    }
    // Told before git's scan ended: initializing, then scanning, before the staging that follows it.
    expect(statuses[0]?.state).toBe("CHECKPOINT_STATE_INITIALIZING");
    expect(statuses.map((s) => s.phase).filter((p) => p)).toEqual(["scanning", "staging"]);
    expect(statuses.at(-1)?.state).toBe("CHECKPOINT_STATE_READY");
  });

  it("a task opened through a link to its folder hears them too (they are kept under the folder's real path)", async () => {
    const { roots, sidecar, profileId } = await sidecarWithSlowScan();
    const link = path.join(roots.base, "project-link");
    fs.symlinkSync(makeWorkspace(roots.base), link);
    const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: link, text: "Finish", profileId });
    const states: string[] = [];
    for await (const res of sidecar.clients.tasks.subscribe({ taskId, afterSeq: 0n })) {
      const ev = res.event!.event;
      if (ev.case === "checkpointStatus") states.push(ev.value.state);
      if (ev.case === "statusChanged" && ev.value.status === TaskStatus.COMPLETED) break;
    }
    expect(states[0]).toBe("CHECKPOINT_STATE_INITIALIZING");
    expect(states.at(-1)).toBe("CHECKPOINT_STATE_READY");
  });

  it("a task started after its workspace's checkpoints got ready hears how they are: a repair's note", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    // A first sidecar readies the workspace's checkpoints; then their index is damaged.
    const first = await startSidecar({ roots, args: ["--workspace", workspace] });
    await expect
      .poll(async () => (await first.clients.checkpoints.getStatus({ workspaceRoot: workspace })).state, {
        timeout: 20_000,
      })
      .toBe(CheckpointState.READY);
    await first.stop();
    const repos = path.join(roots.docsDir, "checkpoints");
    for (const repo of fs.readdirSync(repos)) fs.writeFileSync(path.join(repos, repo, ".git", "index"), "not an index");
    // The next sidecar (as `dline task` starts it) repairs them before any task is asked for.
    const sidecar = await startSidecar({ roots, args: ["--workspace", workspace] });
    cleanups.push(() => sidecar.stop());
    await expect
      .poll(async () => (await sidecar.clients.checkpoints.getStatus({ workspaceRoot: workspace })).message, {
        timeout: 20_000,
      })
      .toMatch(/damaged and has been rebuilt/);
    const { server, profileId } = await configureModel(sidecar.clients, "openai", {
      turns: [{ toolCalls: [{ name: "attempt_completion", input: { result: "Done." } }] }],
    });
    cleanups.push(() => server.stop());
    const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: workspace, text: "Finish", profileId });
    const statuses: { state: string; message: string }[] = [];
    for await (const res of sidecar.clients.tasks.subscribe({ taskId, afterSeq: 0n })) {
      const ev = res.event!.event;
      if (ev.case === "checkpointStatus") statuses.push({ state: ev.value.state, message: ev.value.message });
      if (ev.case === "statusChanged" && ev.value.status === TaskStatus.COMPLETED) break;
    }
    // Before, the task heard nothing of it: the repair was said before the task was there.
    expect(statuses[0]).toEqual({
      state: "CHECKPOINT_STATE_READY",
      message: expect.stringMatching(/^The checkpoint index was damaged and has been rebuilt; no checkpoint was lost/),
    });
  });

  it("a task in the home folder is told once that it runs without checkpoints, and why", async () => {
    const sidecar = await startSidecar();
    cleanups.push(() => sidecar.stop());
    const { server, profileId } = await configureModel(sidecar.clients, "openai", {
      turns: [
        { toolCalls: [{ name: "write_to_file", input: { path: "note.txt", content: "x\n" } }] },
        { toolCalls: [{ name: "write_to_file", input: { path: "note.txt", content: "y\n" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "Done." } }] },
      ],
    });
    cleanups.push(() => server.stop());
    await sidecar.clients.settings.updateSettings({
      scope: SettingsScope.GLOBAL,
      patch: { autoApprovalSettings: { enabled: true, editFiles: true, maxRequests: 100 } },
    });
    const { taskId } = await sidecar.clients.tasks.newTask({
      workspaceRoot: sidecar.roots.home,
      text: "Note it",
      profileId,
    });
    const statuses: { state: string; message: string; canRetry: boolean }[] = [];
    for await (const res of sidecar.clients.tasks.subscribe({ taskId, afterSeq: 0n })) {
      const ev = res.event!.event;
      if (ev.case === "checkpointStatus")
        statuses.push({ state: ev.value.state, message: ev.value.message, canRetry: ev.value.canRetry });
      if (ev.case === "statusChanged" && ev.value.status === TaskStatus.COMPLETED) break;
    }
    expect(statuses).toEqual([
      { state: "CHECKPOINT_STATE_UNAVAILABLE", message: "Cannot use checkpoints in home directory", canRetry: false },
    ]);
  });
});
