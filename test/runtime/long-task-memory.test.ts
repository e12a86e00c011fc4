/**
 * A long task over big files, through the real sidecar binary on a small heap (as on a machine
 * with little memory to spare): sixty edits of 500 KB files. Every edit's content travels in
 * several events (the call, the approval, the message, its end); kept in memory for the task's
 * lifetime they took over 1.5 MB a turn and the sidecar died of an out-of-memory abort. Now the
 * older events wait in a file of the sidecar's, and a subscriber replaying the task from the
 * start still receives every event, in order, with its content.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TaskStatus, type TaskEvent } from "../../core/src/gen/dline/v1/task_pb.js";
import type { DlineClients } from "../../core/src/client/index.js";
import { startSidecar } from "../helpers/sidecar.js";
import { configureModel, makeWorkspace, setAutoApproval } from "./harness.js";

const TURNS = 60;
const FILE_BYTES = 500_000;

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

/** `chars` characters of Chinese text (three bytes each in UTF-8), ending with the turn's number. */
function chineseContentOf(turn: number, chars: number): string {
  const marker = `turn ${String(turn).padStart(4, "0")}\n`;
  return "检查点恢复文件内容".repeat(chars / 9).slice(0, chars - marker.length) + marker;
}

function contentOf(turn: number, bytes = FILE_BYTES): string {
  const marker = `turn ${String(turn).padStart(4, "0")}\n`;
  return (
    "y"
      .repeat(99)
      .concat("\n")
      .repeat(bytes / 100)
      .slice(0, bytes - marker.length) + marker
  );
}

/**
 * Reads the task's events from `afterSeq` until its status says it ended, handing each to
 * `onEvent`; returns how many there were.
 */
async function readUntilEnded(
  clients: DlineClients,
  taskId: string,
  afterSeq: bigint,
  onEvent: (event: TaskEvent, index: number) => void,
): Promise<number> {
  let count = 0;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 240_000);
  try {
    for await (const res of clients.tasks.subscribe({ taskId, afterSeq }, { signal: controller.signal })) {
      const event = res.event!;
      onEvent(event, count++);
      if (event.event.case === "statusChanged" && event.event.value.status !== TaskStatus.RUNNING) break;
    }
  } finally {
    clearTimeout(timer);
  }
  return count;
}

describe("a long task over big files", () => {
  it("completes on a 128 MB heap, and a replay from the start has every event", { timeout: 300_000 }, async () => {
    const sidecar = await startSidecar({ env: { NODE_OPTIONS: "--max-old-space-size=128" } });
    cleanups.push(() => sidecar.stop());
    const { server, profileId } = await configureModel(sidecar.clients, "openai", {
      turns: [
        ...Array.from({ length: TURNS }, (_, i) => ({
          toolCalls: [{ name: "write_to_file", input: { path: `big/f${i % 5}.txt`, content: contentOf(i) } }],
        })),
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ],
    });
    cleanups.push(() => server.stop());
    await setAutoApproval(sidecar.clients, { editFiles: true, maxRequests: 1000 });
    const workspace = makeWorkspace(sidecar.roots.base);

    const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: workspace, text: "rewrite", profileId });
    const live: TaskEvent[] = [];
    await readUntilEnded(sidecar.clients, taskId, 0n, (e) => live.push(e));
    const status = live.flatMap((e) => (e.event.case === "statusChanged" ? [e.event.value.status] : [])).at(-1);
    expect(status).toBe(TaskStatus.COMPLETED);
    // The conversation outgrows the window: some requests summarize it (and take turns of the
    // script), so the edits are counted, not assumed.
    const written = live.flatMap((e) =>
      e.event.case === "toolStarted" ? [JSON.parse(e.event.value.detail) as { path: string; content: string }] : [],
    );
    expect(written.length).toBeGreaterThan(TURNS / 2);
    const last = written.at(-1)!;
    expect(fs.readFileSync(path.join(workspace, last.path), "utf8")).toBe(last.content);

    // A second subscriber from the start: every event again, the oldest read back from the file.
    const replayed = await readUntilEnded(sidecar.clients, taskId, 0n, (e, i) => expect(e).toEqual(live[i]));
    expect(replayed).toBe(live.length);
    const first = live[0]!.seq;
    expect(live.every((e, i) => e.seq === first + BigInt(i))).toBe(true);
    // From the middle too.
    const middle = Math.floor(live.length / 3);
    const tail = await readUntilEnded(sidecar.clients, taskId, live[middle]!.seq, (e, i) =>
      expect(e).toEqual(live[middle + 1 + i]),
    );
    expect(tail).toBe(live.length - middle - 1);

    // An editor opening the task gets it: the newest edit whole, older ones cut to fit the answer.
    const opened = await sidecar.clients.tasks.getTask({ taskId });
    const inputs = opened.messages.flatMap((m) =>
      m.toolCall?.tool === "write_to_file" ? [JSON.parse(m.toolCall.input) as { path: string; content: string }] : [],
    );
    expect(inputs.length).toBe(written.length);
    expect(inputs.at(-1)).toEqual(last);
    expect(inputs[0]!.path).toBe(written[0]!.path);
    expect(inputs[0]!.content.length).toBeLessThan(written[0]!.content.length);

    // The file is the sidecar's alone: nothing of it in the task's folder, before or after it stops.
    const taskTmp = path.join(sidecar.roots.docsDir, "tasks", taskId, "tmp");
    const spills = () => (fs.existsSync(taskTmp) ? fs.readdirSync(taskTmp).filter((f) => f.endsWith(".spill")) : []);
    expect(spills()).toEqual([]);
    await sidecar.stop();
    expect(spills()).toEqual([]);
  });

  it(
    "a sidecar runs task after task on a 128 MB heap: the events of tasks idle for a while leave memory",
    { timeout: 300_000 },
    async () => {
      // Each task makes four edits of 600 KB: about 7 MB of events, which stayed in memory for as
      // long as the sidecar ran, and the sidecar died of an out-of-memory abort before the twentieth.
      const TASKS = 20;
      const EDITS = 4;
      const sidecar = await startSidecar({ env: { NODE_OPTIONS: "--max-old-space-size=128" } });
      cleanups.push(() => sidecar.stop());
      const { server, profileId } = await configureModel(sidecar.clients, "openai", {
        turns: Array.from({ length: TASKS }, (_, t) => [
          ...Array.from({ length: EDITS }, (_, e) => ({
            toolCalls: [
              { name: "write_to_file", input: { path: `big/f${e}.txt`, content: contentOf(t * EDITS + e, 600_000) } },
            ],
          })),
          { toolCalls: [{ name: "attempt_completion", input: { result: `task ${t} done` } }] },
        ]).flat(),
      });
      cleanups.push(() => server.stop());
      await setAutoApproval(sidecar.clients, { editFiles: true, maxRequests: 1000 });
      const workspace = makeWorkspace(sidecar.roots.base);
      const ids: string[] = [];
      let lastEvents: TaskEvent[] = [];
      for (let t = 0; t < TASKS; t++) {
        const { taskId } = await sidecar.clients.tasks.newTask({
          workspaceRoot: workspace,
          text: `task ${t}`,
          profileId,
        });
        ids.push(taskId);
        lastEvents = [];
        await readUntilEnded(sidecar.clients, taskId, 0n, (e) => lastEvents.push(e));
        expect(lastEvents.at(-1)?.event.value).toMatchObject({ status: TaskStatus.COMPLETED });
      }
      // Every task opens: the first (unloaded long since) from its files, the last as loaded.
      for (const taskId of [ids[0]!, ids.at(-1)!]) {
        const opened = await sidecar.clients.tasks.getTask({ taskId });
        expect(opened.messages.at(-1)?.kind).toBe("completion");
      }
      // The newest still replays from its first event, the oldest of them read back from its file.
      const replayed = await readUntilEnded(sidecar.clients, ids.at(-1)!, 0n, (e, i) =>
        expect(e).toEqual(lastEvents[i]),
      );
      expect(replayed).toBe(lastEvents.length);
    },
  );

  // Each tool message carries its edit four times (its detail holds the input and both sides of
  // the preview, its tool call the input and both sides again):
  // - 150 edits of 200 KB made an answer of 90 MB, past the transport's 64 MB (resource_exhausted
  //   in every editor);
  // - 100 edits of 100,000 Chinese characters (300 KB in UTF-8) made one of 72 MB while it was
  //   bounded in characters (24 million), not bytes.
  it.each([
    { text: "200 KB edits", edits: 150, contentOf: (i: number) => contentOf(i, 200_000) },
    { text: "edits of Chinese text", edits: 100, contentOf: (i: number) => chineseContentOf(i, 100_000) },
  ])(
    "opens in an editor: GetTask answers within the transport's limit, the newest edit whole ($text)",
    { timeout: 300_000 },
    async (kind) => {
      const sidecar = await startSidecar();
      cleanups.push(() => sidecar.stop());
      const { server, profileId } = await configureModel(sidecar.clients, "openai", {
        turns: [
          ...Array.from({ length: kind.edits }, (_, i) => ({
            toolCalls: [{ name: "write_to_file", input: { path: `big/f${i % 5}.txt`, content: kind.contentOf(i) } }],
          })),
          { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
        ],
      });
      cleanups.push(() => server.stop());
      await setAutoApproval(sidecar.clients, { editFiles: true, maxRequests: 1000 });
      const workspace = makeWorkspace(sidecar.roots.base);
      const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: workspace, text: "rewrite", profileId });
      const written: { path: string; content: string }[] = [];
      await readUntilEnded(sidecar.clients, taskId, 0n, (e) => {
        if (e.event.case === "toolStarted")
          written.push(JSON.parse(e.event.value.detail) as { path: string; content: string });
      });
      const check = async (clients: DlineClients) => {
        const opened = await clients.tasks.getTask({ taskId });
        const inputs = opened.messages.flatMap((m) =>
          m.toolCall?.tool === "write_to_file"
            ? [JSON.parse(m.toolCall.input) as { path: string; content: string }]
            : [],
        );
        expect(inputs.length).toBe(written.length);
        expect(inputs.at(-1)).toEqual(written.at(-1));
        expect(inputs[0]!.path).toBe(written[0]!.path);
      };
      // From the sidecar that ran it, then from the task's files (another sidecar, as after a restart).
      await check(sidecar.clients);
      await sidecar.stop();
      const other = await startSidecar({ roots: sidecar.roots });
      cleanups.push(() => other.stop());
      await check(other.clients);
    },
  );
});
