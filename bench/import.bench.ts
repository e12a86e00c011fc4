// Import from Cline: discovery and import of 2,000 legacy tasks of 200 messages each
// through the real sidecar. Baseline, measured in the same run: reading and JSON-parsing the
// same ui_messages.json and api_conversation_history.json files in this process (the least any
// discovery must do). Memory: the sidecar's peak resident set (VmHWM) against the bytes of the
// Cline tree, showing that the import holds one task at a time, not the whole tree.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createDlineClients, spawnSidecar } from "../core/src/client/index.js";
import {
  historyItem,
  legacyUiMessages,
  vscodeGlobalStorage,
  writeHistoryItems,
  writeLegacyTask,
} from "../test/import/fixtures.js";
import { fmtMs, ratio, report } from "./helpers.js";

const TASKS = Number(process.env.DLINE_BENCH_IMPORT_TASKS ?? 2000);
const MESSAGES = 200;
const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-bench-import-"));
const home = path.join(base, "home");
// DLINE_BENCH_BINARY compares another build (e.g. the one before a change) on the same machine.
const binary = path.resolve(process.env.DLINE_BENCH_BINARY || "dist/dline-core");

function peakRssKb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

try {
  const root = vscodeGlobalStorage(home, "Code");
  let bytes = 0;
  let t0 = performance.now();
  // Cline's state/taskHistory.json holds one item per task (working folder, totals): written once.
  const items: Record<string, unknown>[] = [];
  for (let i = 0; i < TASKS; i++) {
    const id = `${1_700_000_000_000 + i}`;
    const options = { task: `Bench task ${i}`, padTo: MESSAGES, cwd: `/home/user/project-${i % 20}` };
    const dir = writeLegacyTask(root, id, { ...options, cwd: null });
    items.push(historyItem(id, legacyUiMessages(options), options));
    for (const f of fs.readdirSync(dir)) bytes += fs.statSync(path.join(dir, f)).size;
  }
  writeHistoryItems(root, items);
  console.log(
    `wrote ${TASKS} tasks of ${MESSAGES} messages (${(bytes / 1e6).toFixed(1)} MB) in ${fmtMs(performance.now() - t0)}`,
  );

  // Baseline: read and parse every file discovery needs, nothing else.
  t0 = performance.now();
  JSON.parse(fs.readFileSync(path.join(root, "state", "taskHistory.json"), "utf8"));
  for (const id of fs.readdirSync(path.join(root, "tasks"))) {
    for (const f of ["ui_messages.json", "api_conversation_history.json"])
      JSON.parse(fs.readFileSync(path.join(root, "tasks", id, f), "utf8"));
  }
  const baseline = performance.now() - t0;

  const env = {
    PATH: process.env.PATH,
    HOME: home,
    DLINE_DIR: path.join(base, "dline"),
    DLINE_HOME_DIR: path.join(base, "dline-home"),
    DLINE_DOCS_DIR: path.join(base, "docs"),
  };
  const sidecar = await spawnSidecar({ binary, cwd: base, env, stderr: "ignore" });
  try {
    const clients = createDlineClients(sidecar.handshake.url, sidecar.handshake.token);
    await clients.history.listTasks({}); // the task storage is open
    const rssBefore = peakRssKb(sidecar.handshake.pid);
    t0 = performance.now();
    const found = await clients.imports.discoverCline({}, { timeoutMs: 600_000 });
    const discovery = performance.now() - t0;
    if (found.items.length !== TASKS) throw new Error(`discovered ${found.items.length} of ${TASKS}`);
    t0 = performance.now();
    const res = await clients.imports.importCline({ all: true }, { timeoutMs: 600_000 });
    const imported = performance.now() - t0;
    const ok = res.results.filter((r) => r.outcome === "imported").length;
    if (ok !== TASKS)
      throw new Error(`imported ${ok} of ${TASKS}: ${res.results.find((r) => r.outcome !== "imported")?.error}`);
    const rssPeak = peakRssKb(sidecar.handshake.pid);
    report(`discover ${TASKS} legacy tasks`, fmtMs(discovery), fmtMs(baseline), ratio(discovery, baseline), "< 2 s");
    report(`import ${TASKS} legacy tasks`, fmtMs(imported), fmtMs(baseline), ratio(imported, baseline), "< 30 s");
    report(
      "import throughput (tasks/s)",
      (TASKS / (imported / 1000)).toFixed(0),
      (TASKS / (baseline / 1000)).toFixed(0),
      ratio(baseline, imported),
      "> 67 tasks/s",
    );
    report(
      "sidecar peak RSS (MB) vs tree size (MB)",
      (rssPeak / 1024).toFixed(0),
      (bytes / 1e6).toFixed(0),
      ratio(rssPeak * 1024, bytes),
      `bounded (was ${(rssBefore / 1024).toFixed(0)} MB before)`,
    );
  } finally {
    await sidecar.stop();
  }
} finally {
  fs.rmSync(base, { recursive: true, force: true });
}
