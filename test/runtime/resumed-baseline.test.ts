/**
 * A task whose sidecar was killed before its baseline was saved (its scan still running while the
 * first approval waited), resumed in another sidecar: the baseline then saved names the task's
 * first message and is told as at a task's start, so the chat has its checkpoint before the
 * task's first change. Found with the Kotlin client: that baseline named no message and no event
 * said it; the first message kept no checkpoint. Real sidecars over the same roots; git's scan
 * held back by a wrapper on PATH in the first; scripted model server.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { CheckpointKind, RestoreMode } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { gitShimBeforeStatus } from "../helpers/git-shim.js";
import { makeTestRoots, startSidecar } from "../helpers/sidecar.js";
import { configureModel, makeWorkspace, setAutoApproval } from "./harness.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

describe("a task resumed after its sidecar was killed before the baseline was saved", () => {
  it("gets its baseline on its first message, told by an event, and the first message records it", async () => {
    const roots = makeTestRoots();
    // The first sidecar's scan is held until it is killed (then it ends without running git): its
    // baseline is not saved.
    const hold = path.join(roots.base, "hold-the-scan");
    fs.writeFileSync(hold, "");
    const PATH = gitShimBeforeStatus(
      path.join(roots.base, "stuck-bin"),
      `while [ -e '${hold}' ]; do sleep 0.05; done; exit 1`,
    );
    const first = await startSidecar({ roots, env: { PATH } });
    cleanups.push(() => first.stop());
    const { server, profileId } = await configureModel(first.clients, "openai", {
      turns: [
        { toolCalls: [{ name: "write_to_file", input: { path: "made.txt", content: "made\n" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "Done." } }] },
      ],
    });
    cleanups.push(() => server.stop());
    await setAutoApproval(first.clients, { readFiles: true, editFiles: false });
    const workspace = makeWorkspace(roots.base, { "notes.md": "the person's notes\n" });
    const { taskId } = await first.clients.tasks.newTask({ workspaceRoot: workspace, text: "make a file", profileId });
    await vi.waitFor(
      async () => expect((await first.clients.tasks.getTask({ taskId })).pendingAsk?.tool).toBe("write_to_file"),
      { timeout: 30_000 },
    );
    first.process.child.kill("SIGKILL");
    fs.rmSync(hold);
    await first.process.exited;

    const second = await startSidecar({ roots });
    cleanups.push(() => second.stop());
    // The first sidecar saved no checkpoint of the task.
    expect((await second.clients.checkpoints.listCheckpoints({ taskId })).checkpoints).toEqual([]);
    await second.clients.tasks.resume({ taskId });
    await vi.waitFor(
      async () => expect((await second.clients.tasks.getTask({ taskId })).pendingAsk?.tool).toBe("write_to_file"),
      { timeout: 30_000 },
    );
    const { pendingAsk } = await second.clients.tasks.getTask({ taskId });
    await second.clients.tasks.respond({ taskId, askId: pendingAsk!.askId, approve: true, text: "" });
    await vi.waitFor(
      async () => expect((await second.clients.tasks.getTask({ taskId })).task?.status).toBe(TaskStatus.COMPLETED),
      { timeout: 30_000 },
    );
    expect(fs.readFileSync(path.join(workspace, "made.txt"), "utf8")).toBe("made\n");

    const { messages } = await second.clients.tasks.getTask({ taskId });
    const firstMessage = messages[0]!;
    const baseline = (await second.clients.checkpoints.listCheckpoints({ taskId })).checkpoints[0]!;
    expect(baseline.kind).toBe(CheckpointKind.BASELINE);
    // Before: "" and "".
    expect(baseline.messageId).toBe(firstMessage.id);
    expect(firstMessage.checkpointId).toBe(baseline.id);
    const told: string[] = [];
    for await (const res of second.clients.tasks.subscribe({ taskId, afterSeq: 0n })) {
      const ev = res.event!.event;
      if (ev.case === "checkpointSaved") told.push(`${ev.value.kind}:${ev.value.checkpointId}`);
      if (ev.case === "statusChanged" && ev.value.status === TaskStatus.COMPLETED) break;
    }
    expect(told).toContain(`CHECKPOINT_KIND_BASELINE:${baseline.id}`);
    // Restoring to it puts the workspace back as the task found it.
    await second.clients.checkpoints.restore({ taskId, checkpointId: baseline.id, mode: RestoreMode.FILES });
    expect(fs.existsSync(path.join(workspace, "made.txt"))).toBe(false);
    expect(fs.readFileSync(path.join(workspace, "notes.md"), "utf8")).toBe("the person's notes\n");
  });
});
