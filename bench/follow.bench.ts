// A task's events followed from another sidecar: model chunk -> owner -> peer endpoint ->
// follower -> subscriber, against a direct subscriber of the owner measured on the same chunks
// in the same run. And the design it was chosen over: events written to a SQLite table (WAL)
// by one process and read by another when a file watch fires, measured the same way.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import { createRequire } from "node:module";
import * as os from "node:os";
import * as path from "node:path";
import { spawnSidecar, createDlineClients, type DlineClients } from "../core/src/client/index.js";
import { TaskStatus } from "../core/src/gen/dline/v1/task_pb.js";
import { fmtMs, median, percentile, ratio, report } from "./helpers.js";

const binary = path.resolve("dist/dline-core");
const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-bench-follow-"));
const env = {
  ...process.env,
  HOME: base,
  DLINE_DIR: path.join(base, "d"),
  DLINE_HOME_DIR: path.join(base, "h"),
  DLINE_DOCS_DIR: path.join(base, "docs"),
};
const workspace = path.join(base, "ws");
fs.mkdirSync(workspace);
const CHUNKS = Number(process.env.BENCH_FOLLOW_CHUNKS ?? 400);
const GAP_MS = 10;

/**
 * An OpenAI-format SSE server whose chunks carry the monotonic time they were written at
 * (process.hrtime is CLOCK_MONOTONIC, the same in every process here); it starts streaming when
 * `go` is called, once both subscribers are connected.
 */
async function timestampingModel(chunks: number): Promise<{ url: string; go: () => void; close: () => void }> {
  let go!: () => void;
  const started = new Promise<void>((resolve) => (go = resolve));
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
      res.write(
        `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: `<${process.hrtime.bigint()}>` } }] })}\n\n`,
      );
      setTimeout(tick, GAP_MS);
    };
    void started.then(tick);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, go, close: () => server.close() };
}

/** Arrival time of each stamped chunk at one subscriber, by stamp; resolves when the run ends. */
function arrivals(clients: DlineClients, taskId: string, onFirst: () => void): Promise<Map<string, bigint>> {
  return (async () => {
    const seen = new Map<string, bigint>();
    let first = true;
    for await (const res of clients.tasks.subscribe({ taskId, afterSeq: 0n })) {
      const now = process.hrtime.bigint();
      if (first) {
        first = false;
        onFirst();
      }
      const e = res.event!.event;
      const text =
        e.case === "messageDelta" ? e.value.text : e.case === "messageAdded" ? (e.value.message?.text ?? "") : "";
      for (const [, n] of text.matchAll(/<(\d+)>/g)) if (n !== undefined && !seen.has(n)) seen.set(n, now);
      if (e.case === "statusChanged" && e.value.status !== TaskStatus.RUNNING) break;
    }
    return seen;
  })();
}

async function forwarded(): Promise<{ direct: number[]; follower: number[] }> {
  const model = await timestampingModel(CHUNKS);
  const owner = await spawnSidecar({ binary, env });
  const follower = await spawnSidecar({ binary, env });
  const a = createDlineClients(owner.handshake.url, owner.handshake.token);
  const b = createDlineClients(follower.handshake.url, follower.handshake.token);
  await a.settings.upsertProfile({
    profile: {
      id: "follow",
      name: "follow",
      provider: "openai",
      baseUrl: model.url,
      model: "m",
      contextWindow: 1_000_000n,
    },
  });
  const { taskId } = await a.tasks.newTask({ workspaceRoot: workspace, text: "stream", profileId: "follow" });
  let connected = 0;
  const ready = () => {
    if (++connected === 2) model.go();
  };
  const [atOwner, atFollower] = await Promise.all([arrivals(a, taskId, ready), arrivals(b, taskId, ready)]);
  await Promise.all([owner.stop(), follower.stop()]);
  model.close();
  const direct: number[] = [];
  const viaPeer: number[] = [];
  for (const [stamp, at] of atOwner) {
    const there = atFollower.get(stamp);
    if (there === undefined) throw new Error(`the follower missed a chunk (${atFollower.size} of ${atOwner.size})`);
    direct.push(Number(at - BigInt(stamp)) / 1e6);
    viaPeer.push(Number(there - BigInt(stamp)) / 1e6);
  }
  return { direct, follower: viaPeer };
}

/**
 * The alternative: the owner appends each event to a SQLite table (WAL, as the task databases
 * are) and followers read new rows when a watch on the folder reports the WAL changed.
 */
async function throughDatabase(): Promise<number[]> {
  const requireHere = createRequire(path.resolve("package.json"));
  const sqlitePath = requireHere.resolve("better-sqlite3");
  const Database = requireHere("better-sqlite3");
  const dir = fs.mkdtempSync(path.join(base, "db-"));
  const file = path.join(dir, "events.db");
  const writer = `
    const Database = require(${JSON.stringify(sqlitePath)});
    const db = new Database(${JSON.stringify(file)});
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, stamp TEXT, body BLOB)");
    const insert = db.prepare("INSERT INTO events (stamp, body) VALUES (?, ?)");
    process.stdout.write("ready\\n");
    process.stdin.once("data", () => {
      let i = 0;
      const tick = () => {
        if (i++ >= ${CHUNKS}) { db.close(); process.exit(0); }
        insert.run(String(process.hrtime.bigint()), Buffer.alloc(100));
        setTimeout(tick, ${GAP_MS});
      };
      tick();
    });`;
  const child = spawn(process.execPath, ["-e", writer], { stdio: ["pipe", "pipe", "inherit"] });
  await new Promise((resolve) => child.stdout.once("data", resolve));
  const db = new Database(file, { readonly: true });
  const select = db.prepare("SELECT seq, stamp FROM events WHERE seq > ? ORDER BY seq");
  let last = 0;
  const samples: number[] = [];
  const read = () => {
    const now = process.hrtime.bigint();
    for (const row of select.all(last) as { seq: number; stamp: string }[]) {
      last = row.seq;
      samples.push(Number(now - BigInt(row.stamp)) / 1e6);
    }
  };
  const watcher = fs.watch(dir, (_event, name) => {
    if (name === "events.db-wal") read();
  });
  child.stdin.write("go\n");
  await new Promise((resolve) => child.once("exit", resolve));
  read();
  watcher.close();
  db.close();
  return samples;
}

const run = await forwarded();
// Both subscribers are read by this one process, so a chunk's two arrivals are ordered by which
// socket it reads first: their per-chunk difference swings around zero. What forwarding adds is
// the difference of the two latency distributions, each measured from the model's write.
const signedMs = (ms: number) => (ms < 0 ? `-${fmtMs(-ms)}` : fmtMs(ms));
const p50 = { direct: median(run.direct), follower: median(run.follower) };
const p99 = { direct: percentile(run.direct, 99), follower: percentile(run.follower, 99) };
report("model chunk -> direct subscriber p50", fmtMs(p50.direct), "-", "-", "(baseline)");
report(
  "model chunk -> follower's subscriber p50",
  fmtMs(p50.follower),
  fmtMs(p50.direct),
  ratio(p50.follower, p50.direct),
  "(info)",
);
report("model chunk -> direct subscriber p99", fmtMs(p99.direct), "-", "-", "(baseline)");
report(
  "model chunk -> follower's subscriber p99",
  fmtMs(p99.follower),
  fmtMs(p99.direct),
  ratio(p99.follower, p99.direct),
  "(info)",
);
report("forwarded event: added latency p50", signedMs(p50.follower - p50.direct), "-", "-", "< 10 ms");
report("forwarded event: added latency p99", signedMs(p99.follower - p99.direct), "-", "-", "(info)");
const db = await throughDatabase();
report("event via SQLite WAL + file watch p50 (one hop)", fmtMs(median(db)), "-", "-", "(the design not chosen)");
report("event via SQLite WAL + file watch p99 (one hop)", fmtMs(percentile(db, 99)), "-", "-", "(info)");
fs.rmSync(base, { recursive: true, force: true });
