// Scaling curve: sidecar memory against concurrent tasks (1, 10, 50). Each size runs
// in a fresh dist/dline-core with fresh roots; N tasks are started at once through the TS
// client against the scripted model server, which streams slowly so that every task is
// mid-turn while the sidecar's RSS is sampled from /proc/<pid>/status. The baseline is the
// same process's idle RSS, measured after one warm-up task ran to its end. BENCH_CONCURRENCY overrides the sizes.
import { setMaxListeners } from "node:events";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createDlineClients, spawnSidecar, type DlineClients } from "../core/src/client/index.js";
import { TaskStatus } from "../core/src/gen/dline/v1/task_pb.js";
import { spawnModelServer } from "../test/model-server/spawn.js";
import { ratio, report } from "./helpers.js";

const binary = path.resolve(process.env.DLINE_CORE_BINARY ?? "dist/dline-core");
const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-bench-concurrency-"));
const sizes = (process.env.BENCH_CONCURRENCY ?? "1,10,50").split(",").map(Number);
const goals: Record<number, string> = { 1: "< 150 MB", 10: "< 150 MB", 50: "< 250 MB" };

/** VmRSS and VmHWM (peak) of a process, in MB. */
function memoryOf(pid: number): { rss: number; hwm: number; anon: number; file: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
  // RssFile is mostly the executable's pages, which vary with how the kernel caches the file
  // (the same bytes copied elsewhere map a few MB more or less): RssAnon is the process's own.
  return { rss: kb("VmRSS") / 1024, hwm: kb("VmHWM") / 1024, anon: kb("RssAnon") / 1024, file: kb("RssFile") / 1024 };
}

/** The sample of the highest VmRSS seen over `ms`, sampled every 100 ms. */
async function peakRss(pid: number, ms: number): Promise<{ rss: number; anon: number; file: number }> {
  let peak = { rss: 0, anon: 0, file: 0 };
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    const now = memoryOf(pid);
    if (now.rss > peak.rss) peak = now;
  }
  return peak;
}

async function configure(clients: DlineClients, url: string, id: string): Promise<void> {
  await clients.settings.upsertProfile({
    profile: { id, name: id, provider: "openai", baseUrl: url, model: "m", contextWindow: 1_000_000n },
  });
}

type Sample = Awaited<ReturnType<typeof peakRss>>;

async function memoryWithTasks(n: number): Promise<{ idleSample: Sample; busySample: Sample; hwm: number }> {
  // Each turn streams 600 chunks 25 ms apart (~15 s): long enough for 50 tasks to start and be sampled.
  const model = await spawnModelServer({
    loop: true,
    turns: [{ text: "z".repeat(600 * 20), textChunkChars: 20, writeDelayMs: 25 }],
  });
  const warmModel = await spawnModelServer({ loop: true, turns: [{ text: "warm" }] });
  const roots = path.join(base, `n${n}`);
  const env = {
    ...process.env,
    HOME: roots,
    DLINE_DIR: path.join(roots, "d"),
    DLINE_HOME_DIR: path.join(roots, "h"),
    DLINE_DOCS_DIR: path.join(roots, "docs"),
  };
  fs.mkdirSync(roots, { recursive: true });
  const sidecar = await spawnSidecar({ binary, env, stderr: path.join(roots, "stderr.log") });
  const pid = sidecar.handshake.pid;
  const clients = createDlineClients(sidecar.handshake.url, sidecar.handshake.token);
  const controller = new AbortController();
  setMaxListeners(n + 10, controller.signal); // one listener per subscription
  try {
    await configure(clients, model.url, "bench");
    await configure(clients, warmModel.url, "warm");
    // Idle: after one short task ran to its end (the code a task needs is loaded, the shared
    // databases are open), in the same process the tasks then run in.
    const warmWs = path.join(roots, "ws-warm");
    fs.mkdirSync(warmWs, { recursive: true });
    const warm = await clients.tasks.newTask({ workspaceRoot: warmWs, text: "warm up", profileId: "warm" });
    for await (const res of clients.tasks.subscribe({ taskId: warm.taskId, afterSeq: 0n })) {
      const e = res.event!.event;
      if (e.case === "statusChanged" && e.value.status !== TaskStatus.RUNNING) break;
    }
    await new Promise((r) => setTimeout(r, 1000));
    const idleSample = await peakRss(pid, 1000);

    const workspaces = Array.from({ length: n }, (_, i) => {
      const ws = path.join(roots, `ws-${i}`);
      fs.mkdirSync(ws, { recursive: true });
      fs.writeFileSync(path.join(ws, "README.md"), `# workspace ${i}\n`);
      return ws;
    });
    const ids = await Promise.all(
      workspaces.map((ws, i) => clients.tasks.newTask({ workspaceRoot: ws, text: `task ${i}`, profileId: "bench" })),
    );
    let streaming = 0;
    const allStreaming = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${streaming} of ${n} tasks streamed within 60 s`)), 60_000);
      for (const { taskId } of ids) {
        void (async () => {
          let counted = false;
          for await (const res of clients.tasks.subscribe({ taskId, afterSeq: 0n }, { signal: controller.signal })) {
            const e = res.event!.event;
            if (!counted && e.case === "messageDelta") {
              counted = true;
              if (++streaming === n) {
                clearTimeout(timer);
                resolve();
              }
            }
            if (e.case === "statusChanged" && e.value.status !== TaskStatus.RUNNING && !counted) {
              clearTimeout(timer);
              reject(new Error(`task ${taskId} ended (${TaskStatus[e.value.status]}) before streaming`));
            }
          }
        })().catch(() => {});
      }
    });
    await allStreaming;
    const busySample = await peakRss(pid, 2000);
    const hwm = memoryOf(pid).hwm;
    await Promise.all(ids.map(({ taskId }) => clients.tasks.cancel({ taskId }).catch(() => {})));
    return { idleSample, busySample, hwm };
  } finally {
    controller.abort();
    await sidecar.stop();
    await model.stop();
    await warmModel.stop();
  }
}

try {
  let previous: { n: number; busy: number } | undefined;
  for (const n of sizes) {
    const { idleSample, busySample, hwm } = await memoryWithTasks(n);
    const [idle, busy] = [idleSample.rss, busySample.rss];
    const parts = (m: Sample) => `anon ${mb(m.anon)} + file ${mb(m.file)}`;
    const mb = (v: number) => `${v.toFixed(1)} MB`;
    console.log(
      `  ${n} task(s): idle ${mb(idle)} (${parts(idleSample)}), peak VmRSS while streaming ${mb(busy)} (${parts(busySample)}), VmHWM ${mb(hwm)}`,
    );
    report(`sidecar RSS, ${n} concurrent task(s)`, mb(busy), mb(idle), ratio(busy, idle), goals[n] ?? "(info)");
    report(`sidecar RSS per running task, ${n} task(s)`, `${((busy - idle) / n).toFixed(2)} MB`, "-", "-", "(info)");
    // The slope between sizes: what one more task costs.
    if (previous && n > previous.n) {
      report(
        `sidecar marginal RSS per task, ${previous.n} -> ${n}`,
        `${((busy - previous.busy) / (n - previous.n)).toFixed(2)} MB`,
        "-",
        "-",
        "(info)",
      );
    }
    previous = { n, busy };
  }
} finally {
  fs.rmSync(base, { recursive: true, force: true });
}
