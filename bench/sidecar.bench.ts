// Sidecar benchmarks: cold start, unary round trip, binary size, idle memory. Every figure is
// printed next to a baseline measured in this same run on this same machine, with the Node the
// sidecar embeds (scripts/node-runtime.json), not the one running the benchmark.
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { createDlineClients, spawnSidecar } from "../core/src/client/index.js";
import { fmtMs, median, percentile, ratio, report } from "./helpers.js";

/** The embedded Node: every baseline (`node -e 0`, the bare node:http server, its size) runs on it. */
const node: string = JSON.parse(
  execFileSync(process.execPath, ["scripts/lib/node-runtime.mjs"], { encoding: "utf8" }),
).node;

const binary = path.resolve(process.env.DLINE_CORE_BINARY ?? "dist/dline-core");
const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-bench-"));
const env = {
  ...process.env,
  HOME: base,
  DLINE_DIR: path.join(base, "d"),
  DLINE_HOME_DIR: path.join(base, "h"),
  DLINE_DOCS_DIR: path.join(base, "docs"),
};

function timeProcess(file: string, args: string[]): Promise<{ handshake: number; exited: number }> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint();
    const child = spawn(file, args, { env, stdio: ["pipe", "pipe", "ignore"] });
    let handshake = 0;
    child.stdout.once("data", () => {
      handshake = Number(process.hrtime.bigint() - start) / 1e6;
      child.stdin.end();
    });
    child.once("error", reject);
    child.once("exit", () => resolve({ handshake, exited: Number(process.hrtime.bigint() - start) / 1e6 }));
  });
}

/** CPU time (ms) a process has used so far, all its threads, from the scheduler's own count. */
function cpuMsOf(pid: number | "self"): number {
  let ns = 0;
  for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // a thread that ended meanwhile
    }
  }
  return ns / 1e6;
}

/** `node -e` that prints the CPU time it used up to running its code (cpuMsOf, inlined). */
const NODE_CPU_SCRIPT = `const fs=require("fs");let ns=0;for(const t of fs.readdirSync("/proc/self/task"))ns+=Number(fs.readFileSync("/proc/self/task/"+t+"/schedstat","utf8").split(" ")[0]);process.stdout.write(String(ns/1e6))`;

/**
 * The floor any HTTP server on this Node pays: a bare node:http server (the same as the round
 * trips' baseline) listening on loopback and answering one POST, in its own process, as the sidecar does.
 */
const BARE_SERVER_SCRIPT = `const http=require("node:http");const s=http.createServer({keepAliveTimeout:60000},(q,r)=>{q.resume();q.on("end",()=>{r.writeHead(200,{"Content-Type":"application/json"}).end(JSON.stringify({status:"ok",serverVersion:"0.0.0",uptimeMs:"1",pid:process.pid}))})});s.listen(0,"127.0.0.1",()=>require("node:fs").writeSync(1,"http://127.0.0.1:"+s.address().port+"\\n"));process.stdin.on("end",()=>process.exit(0));process.stdin.resume();`;

async function spawnBareServer(): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const child = spawn(node, ["-e", BARE_SERVER_SCRIPT], { env, stdio: ["pipe", "pipe", "inherit"] });
  const url: string = await new Promise((resolve, reject) => {
    child.once("error", reject);
    child.stdout.once("data", (d) => resolve(String(d).trim()));
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return { url, pid: child.pid!, stop: () => (child.stdin.end(), exited) };
}

/** CPU time (ms) of a fresh bare node:http server up to its first answer. */
async function bareServerFirstAnswerCpu(): Promise<number> {
  const bare = await spawnBareServer();
  await rawJsonRoundTrips(bare.url, "/", {}, 1);
  const cpu = cpuMsOf(bare.pid);
  await bare.stop();
  return cpu;
}

async function coldStart(runs: number) {
  // Warm the addon cache and the page cache once, as any second start would find them.
  await timeProcess(binary, ["serve"]);
  const nodeRuns: number[] = [];
  const handshakeRuns: number[] = [];
  const healthRuns: number[] = [];
  const nodeCpu: number[] = [];
  const handshakeCpu: number[] = [];
  const healthCpu: number[] = [];
  const bareCpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    nodeRuns.push((await timeProcess(node, ["-e", "0"])).exited);
    handshakeRuns.push((await timeProcess(binary, ["serve"])).handshake);
    const start = process.hrtime.bigint();
    const s = await spawnSidecar({ binary, env });
    handshakeCpu.push(cpuMsOf(s.handshake.pid));
    await createDlineClients(s.handshake.url, s.handshake.token).system.health({});
    healthRuns.push(Number(process.hrtime.bigint() - start) / 1e6);
    healthCpu.push(cpuMsOf(s.handshake.pid));
    await s.stop();
    nodeCpu.push(Number(execFileSync(node, ["-e", NODE_CPU_SCRIPT], { env, encoding: "utf8" })));
    bareCpu.push(await bareServerFirstAnswerCpu());
  }
  const nodeP50 = median(nodeRuns);
  report(
    "cold start to handshake line (p50)",
    fmtMs(median(handshakeRuns)),
    fmtMs(nodeP50),
    ratio(median(handshakeRuns), nodeP50),
    "<= 1.5x node -e 0",
  );
  report(
    "cold start to first Health answer (p50)",
    fmtMs(median(healthRuns)),
    fmtMs(nodeP50),
    ratio(median(healthRuns), nodeP50),
    "<= 1.5x node -e 0",
  );
  // The same starts in CPU time, which a busy machine inflates far less than wall time.
  const nodeCpuP50 = median(nodeCpu);
  report(
    "CPU time to handshake line (p50)",
    fmtMs(median(handshakeCpu)),
    fmtMs(nodeCpuP50),
    ratio(median(handshakeCpu), nodeCpuP50),
    "(info) node -e 0's CPU",
  );
  report(
    "CPU time to first Health answer (p50)",
    fmtMs(median(healthCpu)),
    fmtMs(nodeCpuP50),
    ratio(median(healthCpu), nodeCpuP50),
    "(info) node -e 0's CPU",
  );
  // What any node:http server pays on this Node before its first answer: the floor for the above.
  report(
    "CPU time, bare node:http to first answer (p50)",
    fmtMs(median(bareCpu)),
    fmtMs(nodeCpuP50),
    ratio(median(bareCpu), nodeCpuP50),
    "(info) node -e 0's CPU",
  );
  report(
    "CPU time to first Health vs bare node:http",
    fmtMs(median(healthCpu)),
    fmtMs(median(bareCpu)),
    ratio(median(healthCpu), median(bareCpu)),
    "(info)",
  );
}

/** POSTs the same small JSON body over one keep-alive connection, n times; returns latencies. */
async function rawJsonRoundTrips(
  url: string,
  pathName: string,
  headers: Record<string, string>,
  n: number,
): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const body = "{}";
  const samples: number[] = [];
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(`${url}${pathName}`, {
        method: "POST",
        agent,
        headers: { "Content-Type": "application/json", "Content-Length": body.length, ...headers },
      });
      req.on("response", (res) => {
        res.resume();
        res.on("end", () => resolve());
      });
      req.on("error", reject);
      req.end(body);
    });
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await one();
    samples.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  agent.destroy();
  return samples;
}

async function roundTrip(n: number) {
  // The bare server runs in its own process, as the sidecar does, so both pay the same IPC.
  const bare = await spawnBareServer();
  const bareUrl = bare.url;
  const s = await spawnSidecar({ binary, env });
  const auth = { Authorization: `Bearer ${s.handshake.token}` };
  const clients = createDlineClients(s.handshake.url, s.handshake.token);
  const warm = 300;
  await rawJsonRoundTrips(bareUrl, "/", {}, warm);
  // Until a call needs connect, the sidecar answers Health without it (core/src/rpc/system-early.ts).
  await rawJsonRoundTrips(s.handshake.url, "/dline.v1.SystemService/Health", auth, warm);
  const earlySamples = await rawJsonRoundTrips(s.handshake.url, "/dline.v1.SystemService/Health", auth, n);
  // An editor's first domain call loads connect; from then on every call goes through it.
  await clients.settings.getSettings({});
  await rawJsonRoundTrips(s.handshake.url, "/dline.v1.SystemService/Health", auth, warm);
  const bareSamples = await rawJsonRoundTrips(bareUrl, "/", {}, n);
  const rawSamples = await rawJsonRoundTrips(s.handshake.url, "/dline.v1.SystemService/Health", auth, n);
  for (let i = 0; i < warm; i++) await clients.system.health({});
  const tsSamples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await clients.system.health({});
    tsSamples.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const b = median(bareSamples);
  report(
    "Health p50, raw keep-alive client (server cost)",
    fmtMs(median(rawSamples)),
    fmtMs(b),
    ratio(median(rawSamples), b),
    "<= 2x bare node:http",
  );
  report(
    "Health p50, raw client, before connect loads",
    fmtMs(median(earlySamples)),
    fmtMs(b),
    ratio(median(earlySamples), b),
    "(info)",
  );
  report(
    "Health p50, connect-node TS client",
    fmtMs(median(tsSamples)),
    fmtMs(b),
    ratio(median(tsSamples), b),
    "<= 2x bare node:http",
  );
  report(
    "Health p99, raw keep-alive client",
    fmtMs(percentile(rawSamples, 99)),
    fmtMs(percentile(bareSamples, 99)),
    ratio(percentile(rawSamples, 99), percentile(bareSamples, 99)),
    "(info)",
  );
  const rps = (samples: number[]) => (1000 / (samples.reduce((a, x) => a + x, 0) / samples.length)).toFixed(0);
  report(
    "Health requests/s, one connection (raw client)",
    `${rps(rawSamples)}/s`,
    `${rps(bareSamples)}/s`,
    ratio(Number(rps(bareSamples)), Number(rps(rawSamples))),
    "(info)",
  );

  // The same sidecar's memory after all these calls (info); the idle figure is a fresh sidecar.
  report("RSS after the round trips above", `${(rssOf(s.handshake.pid) / 1024).toFixed(1)} MB`, "", "", "(info)");
  await s.stop();
  await bare.stop();
}

/**
 * Drops a file's pages from the page cache (after writing them out). A file just written (the
 * binary right after a build) stays cached in large folios, and each page fault of a mapping
 * then maps a whole folio: the same start shows about 11 MB more RSS than when the binary is
 * read from disk, as an installed binary is at its first start after boot.
 */
function evictFromPageCache(file: string): void {
  const fd = fs.openSync(file, "r");
  fs.fsyncSync(fd);
  fs.closeSync(fd);
  execFileSync("dd", [`if=${file}`, "iflag=nocache", "count=0", "status=none"]);
}

function rssOf(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
}

/**
 * Memory of a sidecar that started, answered Initialize and sits idle, against `node -e 0`'s;
 * then (info) the same sidecar after an editor's usual next calls, which load the domain
 * modules and open the task storage, and how long the first of them took.
 */
async function idleMemory() {
  // Both binaries' pages as a first start after boot maps them (see evictFromPageCache).
  evictFromPageCache(binary);
  evictFromPageCache(node);
  const s = await spawnSidecar({ binary, env });
  const clients = createDlineClients(s.handshake.url, s.handshake.token);
  await clients.system.initialize({ clientName: "bench" });
  await new Promise((r) => setTimeout(r, 1000));
  const rssKb = rssOf(s.handshake.pid);
  const nodeRss = Number(execFileSync(node, ["-e", "console.log(process.memoryUsage().rss)"]).toString()) / 1024;
  report(
    "idle RSS after Initialize",
    `${(rssKb / 1024).toFixed(1)} MB`,
    `${(nodeRss / 1024).toFixed(1)} MB`,
    ratio(rssKb, nodeRss),
    "<= 60 MB",
  );
  // V8's memory reducer shrinks the heap some seconds after the allocations stop.
  await new Promise((r) => setTimeout(r, 20_000));
  const settledKb = rssOf(s.handshake.pid);
  report(
    "idle RSS 20 s after Initialize",
    `${(settledKb / 1024).toFixed(1)} MB`,
    `${(nodeRss / 1024).toFixed(1)} MB`,
    ratio(settledKb, nodeRss),
    "(info)",
  );
  // The same for a bare node:http server that answered one request (its binary evicted too).
  evictFromPageCache(node);
  const bare = await spawnBareServer();
  await rawJsonRoundTrips(bare.url, "/", {}, 1);
  await new Promise((r) => setTimeout(r, 1000));
  const bareRss = rssOf(bare.pid);
  await bare.stop();
  report(
    "idle RSS, bare node:http after one answer",
    `${(bareRss / 1024).toFixed(1)} MB`,
    `${(nodeRss / 1024).toFixed(1)} MB`,
    ratio(bareRss, nodeRss),
    "(info)",
  );
  const start = process.hrtime.bigint();
  await clients.history.listTasks({});
  const firstList = Number(process.hrtime.bigint() - start) / 1e6;
  await clients.settings.getSettings({});
  await new Promise((r) => setTimeout(r, 1000));
  report("first ListTasks (loads the domain modules)", fmtMs(firstList), "", "", "(info)");
  const usedKb = rssOf(s.handshake.pid);
  report(
    "idle RSS after ListTasks and GetSettings",
    `${(usedKb / 1024).toFixed(1)} MB`,
    `${(nodeRss / 1024).toFixed(1)} MB`,
    ratio(usedKb, nodeRss),
    "(info)",
  );
  await s.stop();
}

/** The embedded Node's size once stripped, as the build strips it. */
function strippedSize(file: string): number {
  const copy = path.join(base, "node-stripped");
  fs.copyFileSync(file, copy);
  execFileSync("strip", [copy]);
  const size = fs.statSync(copy).size;
  fs.rmSync(copy);
  return size;
}

const size = fs.statSync(binary).size;
const nodeSize = strippedSize(node);
report(
  "binary size",
  `${(size / 1e6).toFixed(1)} MB`,
  `stripped node ${(nodeSize / 1e6).toFixed(1)} MB`,
  `+${((size - nodeSize) / 1e6).toFixed(1)} MB`,
  "<= stripped node + 5 MB",
);
await coldStart(Number(process.env.BENCH_RUNS ?? 15));
await roundTrip(Number(process.env.BENCH_CALLS ?? 3000));
await idleMemory();
fs.rmSync(base, { recursive: true, force: true });
