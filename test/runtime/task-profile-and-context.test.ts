/**
 * What a chat needs to show a task's model and how full its context is, live and after a
 * reopen: GetTask names the task's profile and the size of its last request with the window it
 * ran under, usage events carry that window, and SetTaskProfile switches the model a task
 * continues with (a failed task retried with another model).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorDetailSchema, ErrorReason } from "../../core/src/gen/dline/v1/errors_pb.js";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { startSidecar } from "../helpers/sidecar.js";
import { configureModel, followUntilDone, makeWorkspace, setAutoApproval } from "./harness.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

describe("a task's profile and context size", () => {
  it("GetTask names the profile and the last request's size and window, live and after a restart; usage events carry the window", async () => {
    const sidecar = await startSidecar();
    cleanups.push(() => sidecar.stop());
    const { server, profileId } = await configureModel(
      sidecar.clients,
      "openai",
      {
        turns: [
          {
            text: "Looking.",
            toolCalls: [{ name: "list_files", input: { path: "." } }],
            usage: { input: 1200, output: 30, cacheRead: 800 },
          },
          // A request whose usage the server does not report leaves the last known size.
          { text: "Hello." },
        ],
      },
      { contextWindow: 32_000n },
    );
    cleanups.push(() => server.stop());
    const workspace = makeWorkspace(sidecar.roots.base);
    await setAutoApproval(sidecar.clients, { readFiles: true });
    const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: workspace, text: "hi", profileId });
    const events = await followUntilDone(sidecar.clients, taskId);
    const usage = events.flatMap((e) => (e.event.case === "usage" ? [e.event.value] : []));
    expect(usage.map((u) => [u.tokensIn, u.cacheReads, u.tokensOut, u.contextWindow])).toEqual([
      [1200n, 800n, 30n, 32_000n],
      [0n, 0n, 0n, 32_000n],
    ]);

    const live = await sidecar.clients.tasks.getTask({ taskId });
    expect([live.profileId, live.contextTokens, live.contextWindow]).toEqual([profileId, 2030n, 32_000n]);

    // Another sidecar over the same roots reads it from the task's files.
    await sidecar.stop();
    const again = await startSidecar({ roots: sidecar.roots });
    cleanups.push(() => again.stop());
    const reopened = await again.clients.tasks.getTask({ taskId });
    expect([reopened.profileId, reopened.contextTokens, reopened.contextWindow]).toEqual([profileId, 2030n, 32_000n]);
  });

  it("a task before its first answer reports no context; SetTaskProfile switches the model the task continues with", async () => {
    const sidecar = await startSidecar();
    cleanups.push(() => sidecar.stop());
    // The first model fails every request: the task fails, and is retried with the second one.
    const first = await configureModel(sidecar.clients, "openai", {
      turns: [{ status: 401, errorMessage: "bad key" }],
    });
    cleanups.push(() => first.server.stop());
    const second = await configureModel(sidecar.clients, "anthropic", {
      turns: [{ text: "Answered by the second model.", usage: { input: 50, output: 5 } }],
    });
    cleanups.push(() => second.server.stop());
    const workspace = makeWorkspace(sidecar.roots.base);
    const { taskId } = await sidecar.clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "hi",
      profileId: first.profileId,
    });
    const failed = await followUntilDone(sidecar.clients, taskId);
    expect(failed.at(-1)?.event.value).toMatchObject({ status: TaskStatus.FAILED });
    const before = await sidecar.clients.tasks.getTask({ taskId });
    expect([before.profileId, before.contextTokens, before.contextWindow]).toEqual([first.profileId, 0n, 0n]);

    const missing = await sidecar.clients.tasks
      .setTaskProfile({ taskId, profileId: "no-such-profile" })
      .catch((err: unknown) => ConnectError.from(err));
    expect(missing).toBeInstanceOf(ConnectError);
    expect((missing as ConnectError).code).toBe(Code.NotFound);
    expect((missing as ConnectError).findDetails(ErrorDetailSchema)[0]?.reason).toBe(ErrorReason.PROFILE_NOT_FOUND);
    expect((await sidecar.clients.tasks.getTask({ taskId })).profileId).toBe(first.profileId);

    await sidecar.clients.tasks.setTaskProfile({ taskId, profileId: second.profileId });
    expect((await sidecar.clients.tasks.getTask({ taskId })).profileId).toBe(second.profileId);
    const lastSeq = failed.at(-1)!.seq;
    await sidecar.clients.tasks.resume({ taskId });
    const resumed = await followUntilDone(sidecar.clients, taskId, () => {}, lastSeq);
    expect(resumed.at(-1)?.event.value).toMatchObject({ status: TaskStatus.COMPLETED });
    expect(await second.server.requests()).toHaveLength(1);
    const after = await sidecar.clients.tasks.getTask({ taskId });
    expect(after.messages.some((m) => m.text.includes("Answered by the second model."))).toBe(true);
    expect([after.contextTokens, after.contextWindow]).toEqual([55n, 100_000n]);
  });
});
