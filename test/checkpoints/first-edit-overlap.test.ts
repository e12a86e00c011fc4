// Through the real sidecar and scripted model: a task's first edit waits for the baseline's scan
// (held here for as long as the test needs, as a large workspace's scan lasts), as the spec
// says; the checkpoints hold each state exactly. It once did not wait (the file's content kept in
// memory for the baseline), and a run that ended before the baseline was saved lost it.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CheckpointKind } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { makeTestRoots, startSidecar } from "../helpers/sidecar.js";
import { configureModel, followUntilDone, makeWorkspace, setAutoApproval } from "../runtime/harness.js";
import { holdGitStatus, releaseHeldGits } from "./fixtures/held-git.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  releaseHeldGits();
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

async function waitFor(condition: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return condition();
}

/**
 * A sidecar whose baseline scans are held (holdGitStatus), a scripted model answering `turns`,
 * edits auto-approved, and a workspace with `files`; `fileAt` reads a checkpoint's file.
 */
async function heldSidecar(turns: Parameters<typeof configureModel>[2]["turns"], files: Record<string, string>) {
  const roots = makeTestRoots();
  const held = holdGitStatus(roots.base);
  const sidecar = await startSidecar({ roots, env: { PATH: held.path } });
  cleanups.push(() => sidecar.stop());
  const { clients } = sidecar;
  const workspace = makeWorkspace(roots.base, files);
  const { server, profileId } = await configureModel(clients, "openai", { turns });
  cleanups.push(() => server.stop());
  await setAutoApproval(clients, { editFiles: true });
  const fileAt = (commit: string, file: string) => {
    const checkpoints = path.join(roots.docsDir, "checkpoints");
    const gitDir = fs
      .readdirSync(checkpoints)
      .map((d) => path.join(checkpoints, d, ".git"))
      .find((d) => fs.existsSync(d))!;
    return execFileSync("git", ["--git-dir", gitDir, "show", `${commit}:${file}`], {
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
      encoding: "utf8",
    });
  };
  return { held, clients, server, profileId, workspace, fileAt };
}

describe("a task's first edit while its baseline is being taken", () => {
  it("waits for the scan; each checkpoint holds its turn's files", async () => {
    const { held, clients, server, profileId, workspace, fileAt } = await heldSidecar(
      [
        { toolCalls: [{ name: "write_to_file", input: { path: "src/app.txt", content: "first edit\n" } }] },
        { toolCalls: [{ name: "write_to_file", input: { path: "src/app.txt", content: "second edit\n" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ],
      { "src/app.txt": "as the person left it\n" },
    );

    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "edit app.txt", profileId });
    const done = followUntilDone(clients, taskId);
    // The scan is held: the model answered with the edit, which waits.
    expect(await waitFor(async () => held.holding() && (await server.requests()).length >= 1, 20_000)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(fs.readFileSync(path.join(workspace, "src/app.txt"), "utf8")).toBe("as the person left it\n");
    expect((await server.requests()).length).toBe(1);

    held.release();
    const events = await done;
    const status = events.findLast((e) => e.event.case === "statusChanged");
    expect(status?.event.case === "statusChanged" && status.event.value.status).toBe(TaskStatus.COMPLETED);
    const { checkpoints } = await clients.checkpoints.listCheckpoints({ taskId });
    expect(checkpoints.map((c) => c.kind)).toEqual([
      CheckpointKind.BASELINE,
      CheckpointKind.TURN,
      CheckpointKind.TURN,
      CheckpointKind.COMPLETION,
    ]);
    expect(checkpoints.map((c) => fileAt(c.id, "src/app.txt"))).toEqual([
      "as the person left it\n",
      "first edit\n",
      "second edit\n",
      "second edit\n",
    ]);
    // Every checkpoint is told, on the message it follows (the baseline on the task's first).
    const saved = events.flatMap((e) => (e.event.case === "checkpointSaved" ? [e.event.value.checkpointId] : []));
    expect(saved.sort()).toEqual(checkpoints.map((c) => c.id).sort());
  });

  it("runs a tool's hooks only once the baseline is taken: what a hook changes is the task's", async () => {
    const { held, clients, profileId, workspace, fileAt } = await heldSidecar(
      [
        { toolCalls: [{ name: "write_to_file", input: { path: "src/app.txt", content: "first edit\n" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ],
      { "src/hooked.txt": "before the task\n" },
    );
    await clients.settings.trustWorkspace({ workspaceRoot: workspace, trusted: true });
    const hook = path.join(workspace, ".agents", "hooks", "PostToolUse.sh");
    fs.mkdirSync(path.dirname(hook), { recursive: true });
    fs.writeFileSync(hook, "#!/bin/sh\ncat > /dev/null\necho 'changed by the hook' >> src/hooked.txt\n", {
      mode: 0o755,
    });

    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "edit app.txt", profileId });
    const done = followUntilDone(clients, taskId);
    // Neither the edit nor its hook runs while the scan is held.
    expect(await waitFor(async () => held.holding(), 20_000)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(fs.readFileSync(path.join(workspace, "src/app.txt"), "utf8")).toBe("hello\n");
    expect(fs.readFileSync(path.join(workspace, "src/hooked.txt"), "utf8")).toBe("before the task\n");
    held.release();
    await done;
    const hooked = fs.readFileSync(path.join(workspace, "src/hooked.txt"), "utf8");
    expect(hooked).toMatch(/^before the task\nchanged by the hook\n/);
    const { checkpoints } = await clients.checkpoints.listCheckpoints({ taskId });
    const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE)!;
    const completion = checkpoints.find((c) => c.kind === CheckpointKind.COMPLETION)!;
    expect(fileAt(baseline.id, "src/hooked.txt")).toBe("before the task\n");
    expect(fileAt(baseline.id, "src/app.txt")).toBe("hello\n");
    expect(fileAt(completion.id, "src/hooked.txt")).toBe(hooked);
  });
});
