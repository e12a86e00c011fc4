// Task stream benchmarks: task events per second from a model server through the core to a TS
// subscriber, against a bare connect-node server stream of 100-byte messages measured in the
// same run; added latency from a model chunk to the client; sidecar memory with 10 tasks.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { build } from "esbuild";
import { spawnSidecar, createDlineClients, type DlineClients } from "../core/src/client/index.js";
import { MessageRole, TaskService, TaskStatus } from "../core/src/gen/dline/v1/task_pb.js";
import { spawnModelServer } from "../test/model-server/spawn.js";
import { MAX_REPLY_CHARS } from "../core/src/runtime/message-bounds.js";
import { fmtMs, median, percentile, ratio, report } from "./helpers.js";

const binary = path.resolve(process.env.DLINE_CORE_BINARY ?? "dist/dline-core");
const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-bench-stream-"));
const env = {
  ...process.env,
  HOME: base,
  DLINE_DIR: path.join(base, "d"),
  DLINE_HOME_DIR: path.join(base, "h"),
  DLINE_DOCS_DIR: path.join(base, "docs"),
};
const workspace = path.join(base, "ws");
fs.mkdirSync(workspace);

async function bareRate(n: number): Promise<number> {
  const outfile = path.resolve(".bench/bare-stream-server.mjs");
  await build({
    entryPoints: [path.resolve("bench/bare-stream-server.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
  });
  const child = spawn(process.execPath, [outfile], { stdio: ["pipe", "pipe", "inherit"] });
  const url: string = await new Promise((resolve) => child.stdout.once("data", (d) => resolve(String(d).trim())));
  const client = createClient(TaskService, createConnectTransport({ baseUrl: url, httpVersion: "1.1" }));
  let count = 0;
  const start = process.hrtime.bigint();
  for await (const _ of client.subscribe({ taskId: "t", afterSeq: BigInt(n) })) count++;
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  child.stdin.end();
  return count / seconds;
}

async function configure(clients: DlineClients, url: string, id: string) {
  await clients.settings.upsertProfile({
    profile: { id, name: id, provider: "openai", baseUrl: url, model: "m", contextWindow: 1_000_000n },
  });
}

async function coreRate(chunks: number): Promise<number> {
  // The whole reply stays within what a chat message keeps (MAX_REPLY_CHARS): past it the core
  // cuts the reply and streams no more deltas, and the rate would count the cut part's chunks
  // as time without events (it did: 20,000 chunks of 100 characters showed half the rate).
  const chunkChars = Math.min(100, Math.floor((MAX_REPLY_CHARS - 1) / chunks));
  const server = await spawnModelServer({
    turns: [{ text: "y".repeat(chunkChars * chunks), textChunkChars: chunkChars }],
  });
  const s = await spawnSidecar({ binary, env });
  const clients = createDlineClients(s.handshake.url, s.handshake.token);
  await configure(clients, server.url, "rate");
  const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "stream", profileId: "rate" });
  // The reply's events: the message added with its first chunk, then a delta per chunk.
  let replyId = "";
  let deltas = 0;
  let first = 0n;
  let last = 0n;
  for await (const res of clients.tasks.subscribe({ taskId, afterSeq: 0n })) {
    const e = res.event!.event;
    const added =
      e.case === "messageAdded" &&
      !replyId &&
      e.value.message?.kind === "text" &&
      e.value.message.role === MessageRole.ASSISTANT;
    if (added || (e.case === "messageDelta" && e.value.messageId === replyId)) {
      if (added) replyId = e.value.message!.id;
      if (!first) first = process.hrtime.bigint();
      last = process.hrtime.bigint();
      deltas++;
    }
    if (e.case === "statusChanged" && e.value.status !== TaskStatus.RUNNING) break;
  }
  await s.stop();
  await server.stop();
  if (deltas !== chunks) throw new Error(`the subscriber saw ${deltas} of the reply's ${chunks} chunks`);
  return deltas / (Number(last - first) / 1e9);
}

/**
 * A minimal OpenAI-format SSE server whose every chunk carries the monotonic time it was
 * written (process.hrtime is CLOCK_MONOTONIC, shared by processes on this machine).
 */
function timestampingModel(chunks: number, gapMs: number): Promise<{ url: string; close: () => void }> {
  const server = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "Content-Type": "text/event-stream" });
    let i = 0;
    const tick = () => {
      if (i++ >= chunks) {
        res.write(
          `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\ndata: [DONE]\n\n`,
        );
        res.end();
        return;
      }
      const stamp = `<${process.hrtime.bigint()}>`;
      res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: stamp } }] })}\n\n`);
      setTimeout(tick, gapMs);
    };
    tick();
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => server.close() }),
    ),
  );
}

async function chunkLatency(chunks: number): Promise<number[]> {
  const model = await timestampingModel(chunks, 10);
  const s = await spawnSidecar({ binary, env });
  const clients = createDlineClients(s.handshake.url, s.handshake.token);
  await configure(clients, model.url, "latency");
  const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "latency", profileId: "latency" });
  const samples: number[] = [];
  for await (const res of clients.tasks.subscribe({ taskId, afterSeq: 0n })) {
    const e = res.event!.event;
    const text =
      e.case === "messageDelta" ? e.value.text : e.case === "messageAdded" ? (e.value.message?.text ?? "") : "";
    const now = process.hrtime.bigint();
    for (const [, sent] of text.matchAll(/<(\d+)>/g)) if (sent) samples.push(Number(now - BigInt(sent)) / 1e6);
    if (e.case === "statusChanged" && e.value.status !== TaskStatus.RUNNING) break;
  }
  await s.stop();
  model.close();
  return samples;
}

async function memoryWithTasks(tasks: number): Promise<number> {
  const model = await timestampingModel(600, 10); // each task streams for ~6 s
  const s = await spawnSidecar({ binary, env });
  const clients = createDlineClients(s.handshake.url, s.handshake.token);
  await configure(clients, model.url, "mem");
  const controller = new AbortController();
  for (let i = 0; i < tasks; i++) {
    const ws = path.join(base, `ws-${i}`);
    fs.mkdirSync(ws, { recursive: true });
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: ws, text: `task ${i}`, profileId: "mem" });
    void (async () => {
      for await (const _ of clients.tasks.subscribe({ taskId, afterSeq: 0n }, { signal: controller.signal }));
    })().catch(() => {});
  }
  await new Promise((r) => setTimeout(r, 3000));
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${s.handshake.pid}/status`, "utf8"))?.[1] ?? 0);
  controller.abort();
  await s.stop();
  model.close();
  return rssKb / 1024;
}

const n = Number(process.env.BENCH_EVENTS ?? 20_000);
const bare = await bareRate(n);
const core = await coreRate(n);
report(
  "task events/s, model -> core -> TS subscriber",
  `${core.toFixed(0)}/s`,
  `${bare.toFixed(0)}/s`,
  ratio(core, bare),
  ">= 0.5x bare stream",
);
const latency = await chunkLatency(200);
report("model chunk -> client latency p50", fmtMs(median(latency)), "-", "-", "< 5 ms");
report("model chunk -> client latency p99", fmtMs(percentile(latency, 99)), "-", "-", "(info)");
const rss = await memoryWithTasks(10);
report("sidecar RSS with 10 streaming tasks", `${rss.toFixed(1)} MB`, "-", "-", "< 150 MB");
fs.rmSync(base, { recursive: true, force: true });
