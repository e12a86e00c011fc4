/**
 * An answer that stops midway keeps the text the chat had shown: cancelled, stopped with its
 * sidecar (an editor quitting closes the sidecar's stdin), or with the sidecar killed. Before, the
 * stored message held only the answer's first delta ("SL" of a long answer, reopened in Neovim)
 * and stayed partial for good.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MessageRole, TaskStatus, type TaskEvent, type UiMessage } from "../../core/src/gen/dline/v1/task_pb.js";
import { startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import { configureModel, makeWorkspace } from "./harness.js";
import type { ModelServerProcess } from "../model-server/spawn.js";
import { recorded } from "../model-server/script.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

const LONG_ANSWER = Array.from({ length: 2000 }, (_, i) => `word${i}`).join(" ");

/** A sidecar whose model streams LONG_ANSWER slowly (8 characters per delta, about 50 ms apart). */
async function slowAnswerTask(): Promise<{ sidecar: RunningSidecar; taskId: string; server: ModelServerProcess }> {
  const sidecar = await startSidecar();
  cleanups.push(() => sidecar.stop());
  const { server, profileId } = await configureModel(sidecar.clients, "openai", {
    turns: [{ text: LONG_ANSWER, writeChunkBytes: 64, writeDelayMs: 25 }, { text: "Going on." }, { text: "Went on." }],
  });
  cleanups.push(() => server.stop());
  const workspace = makeWorkspace(sidecar.roots.base);
  const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: workspace, text: "explain", profileId });
  return { sidecar, taskId, server };
}

/**
 * Follows the task's stream, adding up the answer's text as the chat shows it, until `enough`
 * says so; then does `stop` and reads on until the stream ends or goes quiet.
 */
async function showUntil(
  sidecar: RunningSidecar,
  taskId: string,
  enough: (shown: string) => boolean,
  stop: () => Promise<unknown>,
): Promise<{ shown: string; messageId: string; statuses: TaskStatus[]; cutOffLive: boolean }> {
  let shown = "";
  let cutOffLive = false;
  let messageId = "";
  const statuses: TaskStatus[] = [];
  let stopping: Promise<unknown> | undefined;
  const controller = new AbortController();
  const onEvent = (e: TaskEvent) => {
    const ev = e.event;
    if (
      ev.case === "messageAdded" &&
      ev.value.message?.role === MessageRole.ASSISTANT &&
      ev.value.message.kind === "text"
    ) {
      messageId = ev.value.message.id;
      shown = ev.value.message.text;
    } else if (ev.case === "messageDelta" && ev.value.messageId === messageId) {
      shown += ev.value.text;
    } else if (ev.case === "messageFinalized" && ev.value.message?.id === messageId) {
      cutOffLive = ev.value.message.cutOff;
    } else if (ev.case === "statusChanged") {
      statuses.push(ev.value.status);
    }
    if (!stopping && messageId && enough(shown)) stopping = stop();
  };
  try {
    for await (const res of sidecar.clients.tasks.subscribe({ taskId, afterSeq: 0n }, { signal: controller.signal })) {
      onEvent(res.event!);
      const last = statuses.at(-1);
      if (last === TaskStatus.CANCELLED || last === TaskStatus.INTERRUPTED) break;
    }
  } catch {
    // the sidecar stopped or was killed: its stream ends with it
  }
  await stopping;
  return { shown, messageId, statuses, cutOffLive };
}

/** Waits for the task's status, among the events after `afterSeq`. */
async function untilStatus(sidecar: RunningSidecar, taskId: string, afterSeq: bigint, status: TaskStatus) {
  for await (const res of sidecar.clients.tasks.subscribe({ taskId, afterSeq })) {
    const ev = res.event!.event;
    if (ev.case === "statusChanged" && ev.value.status === status) return;
  }
}

function answerOf(messages: UiMessage[], id: string): UiMessage {
  const found = messages.find((m) => m.id === id);
  expect(found, `message ${id}`).toBeDefined();
  return found!;
}

/** The answer as another sidecar over the same roots opens it: the task interrupted, the text no longer streaming. */
async function reopenedAnswer(sidecar: RunningSidecar, taskId: string, messageId: string): Promise<UiMessage> {
  const other = await startSidecar({ roots: sidecar.roots });
  cleanups.push(() => other.stop());
  const opened = await other.clients.tasks.getTask({ taskId });
  expect(opened.task?.status).toBe(TaskStatus.INTERRUPTED);
  const stored = answerOf(opened.messages, messageId);
  expect(stored.partial).toBe(false);
  expect(stored.cutOff, "the reopened answer is marked as cut off").toBe(true);
  // Following the task settles what its dead sidecar left streaming: still cut off, live and stored.
  const controller = new AbortController();
  let finalized: UiMessage | undefined;
  const stream = other.clients.tasks.subscribe({ taskId, afterSeq: opened.lastSeq }, { signal: controller.signal });
  const timer = setTimeout(() => controller.abort(), 3_000);
  try {
    for await (const res of stream) {
      const ev = res.event!.event;
      if (ev.case === "messageFinalized" && ev.value.message?.id === messageId) finalized = ev.value.message;
      if (ev.case === "statusChanged") break;
    }
  } catch {
    // aborted: nothing more came
  } finally {
    clearTimeout(timer);
  }
  if (finalized) expect(finalized.cutOff, "the live update keeps the mark").toBe(true);
  const again = answerOf((await other.clients.tasks.getTask({ taskId })).messages, messageId);
  expect(again.cutOff, "the answer stays marked once the task was followed").toBe(true);
  return stored;
}

describe("an answer that stops midway keeps what was shown", () => {
  it("cancelled: the stored message holds the text shown, no longer streaming", { timeout: 60_000 }, async () => {
    const { sidecar, taskId } = await slowAnswerTask();
    const { shown, messageId, statuses, cutOffLive } = await showUntil(
      sidecar,
      taskId,
      (text) => text.length >= 400,
      () => sidecar.clients.tasks.cancel({ taskId }),
    );
    expect(statuses.at(-1)).toBe(TaskStatus.CANCELLED);
    // Every client can mark where the answer was cut: live, and from the stored task.
    expect(cutOffLive).toBe(true);
    const stored = answerOf((await sidecar.clients.tasks.getTask({ taskId })).messages, messageId);
    expect(stored.partial).toBe(false);
    expect(stored.cutOff).toBe(true);
    expect(stored.text).toBe(shown);
    expect(stored.text.length).toBeGreaterThanOrEqual(400);
  });

  it("cancelled, then the person writes again: the model reads the text it was cut at, then their new words", async () => {
    const { sidecar, taskId, server } = await slowAnswerTask();
    const { shown } = await showUntil(
      sidecar,
      taskId,
      (text) => text.length >= 400,
      () => sidecar.clients.tasks.cancel({ taskId }),
    );
    const before = (await sidecar.clients.tasks.getTask({ taskId })).lastSeq;
    await sidecar.clients.tasks.sendMessage({ taskId, text: "go on" });
    await untilStatus(sidecar, taskId, before, TaskStatus.COMPLETED);
    const messages = recorded(await server.requests(), 1).body.messages.slice(1) as {
      role: string;
      content: unknown;
    }[];
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    const answer = String(messages[1]!.content);
    expect(answer.startsWith(shown)).toBe(true);
    expect(answer).toContain("[This answer was interrupted here");
    expect(JSON.stringify(messages[2]!.content)).toContain("go on");
    expect(JSON.stringify(messages[0]!.content)).not.toContain("go on");

    const finished = (await sidecar.clients.tasks.getTask({ taskId })).messages.filter(
      (m) => m.role === MessageRole.ASSISTANT && m.kind === "text",
    );
    expect(finished.map((m) => m.cutOff)).toEqual([true, ...finished.slice(1).map(() => false)]);

    // Resumed after an answer that called no tool: the request does not end with the model's words.
    const again = (await sidecar.clients.tasks.getTask({ taskId })).lastSeq;
    await sidecar.clients.tasks.resume({ taskId });
    await untilStatus(sidecar, taskId, again, TaskStatus.COMPLETED);
    const resumed = recorded(await server.requests(), 2).body.messages as { role: string; content: unknown }[];
    expect(resumed.at(-1)?.role).toBe("user");
    expect(JSON.stringify(resumed.at(-1)?.content)).toContain("The task was resumed");
  });

  it(
    "its sidecar stops (the editor quit): another sidecar opens the text shown, interrupted",
    { timeout: 60_000 },
    async () => {
      const { sidecar, taskId } = await slowAnswerTask();
      const { shown, messageId } = await showUntil(
        sidecar,
        taskId,
        (text) => text.length >= 400,
        () => sidecar.stop(),
      );
      const stored = await reopenedAnswer(sidecar, taskId, messageId);
      // Every delta the chat showed (more may have been stored after the last one it read).
      expect(stored.text.startsWith(shown)).toBe(true);
      expect(LONG_ANSWER.startsWith(stored.text)).toBe(true);
    },
  );

  it(
    "its sidecar is killed: the text stored a moment before stays (not only the first delta)",
    { timeout: 60_000 },
    async () => {
      const { sidecar, taskId } = await slowAnswerTask();
      let startedAt = 0;
      const { shown, messageId } = await showUntil(
        sidecar,
        taskId,
        (text) => {
          startedAt ||= Date.now();
          // Well past the moment the streaming text is stored again (once a second).
          return Date.now() - startedAt > 3_000 && text.length >= 200;
        },
        async () => {
          sidecar.process.child.kill("SIGKILL");
          await sidecar.process.exited;
        },
      );
      const stored = await reopenedAnswer(sidecar, taskId, messageId);
      expect(LONG_ANSWER.startsWith(stored.text)).toBe(true);
      expect(shown.length).toBeGreaterThan(0);
      // The first delta is 8 characters; the text of at least the first second of streaming is there.
      expect(stored.text.length).toBeGreaterThan(100);
    },
  );
});
