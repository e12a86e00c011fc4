// Checkpoint costs on synthetic workspaces (2,000 and 20,000 files; 100,000 with
// BENCH_CHECKPOINTS_100K=1), each against a baseline measured in the same run on a copy of
// the same tree: raw `git add -A && git commit` for the baseline save, and the peer strategy
// (`git add .` of the whole tree + commit) for per-turn saves. Prints figures; asserts nothing.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { CheckpointManager } from "../core/src/checkpoints/index.js";
import { silentLogger } from "../core/src/logging/logger.js";
import { InstanceLayout } from "../core/src/storage/instance-layout.js";
import { fmtMs, median, ratio, report } from "./helpers.js";

const sizes = [2_000, 20_000, ...(process.env.BENCH_CHECKPOINTS_100K ? [100_000] : [])];
const TURNS = 15;

function makeTree(root: string, files: number): void {
  for (let i = 0; i < files; i++) {
    const dir = path.join(root, `pkg-${Math.floor(i / 1000)}`, `mod-${Math.floor(i / 50) % 20}`);
    if (i % 50 === 0) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `file-${i}.ts`), `// file ${i}\nexport const value${i} = ${i};\n`.repeat(1 + (i % 7)));
  }
}

function rawGit(cwd: string, ...args: string[]): void {
  execFileSync("git", args, {
    cwd,
    stdio: "ignore",
    env: {
      PATH: process.env.PATH,
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: "b",
      GIT_AUTHOR_EMAIL: "b@b",
      GIT_COMMITTER_NAME: "b",
      GIT_COMMITTER_EMAIL: "b@b",
    },
  });
}

function time<T>(fn: () => T): [number, T] {
  const t = performance.now();
  const r = fn();
  return [performance.now() - t, r];
}

async function timeAsync<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const r = await fn();
  return [performance.now() - t, r];
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    total += e.isDirectory() ? dirBytes(p) : fs.statSync(p).size;
  }
  return total;
}

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`;

for (const n of sizes) {
  console.log(`\n--- ${n.toLocaleString("en")} files`);
  const at = `@${n / 1000}k`;
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-cp-bench-"));
  const ws = path.join(base, "workspace");
  const copy = path.join(base, "copy");
  makeTree(ws, n);
  fs.cpSync(ws, copy, { recursive: true });
  const layout = new InstanceLayout({ dataRoot: path.join(base, "data"), homeRoot: path.join(base, "h"), documentsRoot: path.join(base, "docs") });
  const manager = new CheckpointManager({
    layout,
    env: { PATH: process.env.PATH, HOME: base },
    homeDir: path.join(base, "home"),
    logger: silentLogger(),
    budgetCheckEvery: 1_000_000,
  });
  const task = { id: "bench", workspaceRoots: [ws] };

  // Baseline save vs raw git add -A && git commit on the copy.
  const [peerBaseline] = time(() => {
    rawGit(copy, "init", "-q");
    rawGit(copy, "add", "-A");
    rawGit(copy, "commit", "-qm", "baseline");
  });
  const [ourBaseline, baseCp] = await timeAsync(() => manager.ensureBaseline(task));
  if (!baseCp) throw new Error(JSON.stringify(await manager.status({ workspaceRoot: ws })));
  report(`baseline save ${at}`, fmtMs(ourBaseline), fmtMs(peerBaseline), ratio(ourBaseline, peerBaseline), "<= 1.3x");

  const edited = [0, Math.floor(n / 2), n - 1].map((i) => `pkg-${Math.floor(i / 1000)}/mod-${Math.floor(i / 50) % 20}/file-${i}.ts`);
  const edit = (root: string, turn: number) => {
    for (const p of edited) fs.writeFileSync(path.join(root, p), `// turn ${turn}\nexport const changed = ${turn};\n`);
  };

  // Per-turn save after 3 tool-edited files vs the peer strategy.
  const ours: number[] = [];
  const peer: number[] = [];
  for (let t = 1; t <= TURNS; t++) {
    edit(ws, t);
    edit(copy, t);
    ours.push((await timeAsync(() => manager.saveTurn(task, { editedPaths: edited })))[0]);
    peer.push(time(() => {
      rawGit(copy, "add", ".");
      rawGit(copy, "commit", "-qm", `turn ${t}`);
    })[0]);
  }
  report(`turn save, 3 tool-edited files (median) ${at}`, fmtMs(median(ours)), fmtMs(median(peer)), ratio(median(ours), median(peer)), "< 40 ms, >= 10x faster");

  // Per-turn save after a command changed 3 files (no recorded paths).
  const oursCmd: number[] = [];
  const peerCmd: number[] = [];
  for (let t = 1; t <= TURNS; t++) {
    edit(ws, 100 + t);
    edit(copy, 100 + t);
    oursCmd.push((await timeAsync(() => manager.saveTurn(task, { commandRan: true })))[0]);
    peerCmd.push(time(() => {
      rawGit(copy, "add", ".");
      rawGit(copy, "commit", "-qm", `cmd ${t}`);
    })[0]);
  }
  report(`turn save, command changed 3 files ${at}`, fmtMs(median(oursCmd)), fmtMs(median(peerCmd)), ratio(median(oursCmd), median(peerCmd)), "faster than peer");

  // Restore of those 3 files (the task recorded them), vs the peer's `git checkout <commit> -- paths`.
  const cps = await manager.list("bench");
  const target = cps[3];
  const restores: number[] = [];
  const peerRestores: number[] = [];
  for (let r = 0; r < 5; r++) {
    edit(ws, 500 + r);
    edit(copy, 500 + r);
    restores.push((await timeAsync(() => manager.restore("bench", target.id, "files")))[0]);
    peerRestores.push(time(() => rawGit(copy, "checkout", "HEAD~3", "--", ...edited))[0]);
  }
  report(`restore of 3 files (median) ${at}`, fmtMs(median(restores)), fmtMs(median(peerRestores)), ratio(median(restores), median(peerRestores)), "< 30 ms at 20k");

  if (n === 20_000) {
    for (let t = 1; t <= 100; t++) {
      edit(ws, 1000 + t);
      await manager.saveTurn(task, { editedPaths: edited });
    }
    const shadow = dirBytes(path.join(layout.checkpointRepoDir(ws), ".git"));
    const tree = dirBytes(ws);
    report(`disk after 100 more turns (shadow .git) ${at}`, mb(shadow), mb(tree), ratio(shadow, tree), "vs the tree itself");
    const gitDir = path.join(layout.checkpointRepoDir(ws), ".git");
    execFileSync("git", ["--git-dir", gitDir, "gc", "--quiet"], { env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" } });
    const packed = dirBytes(gitDir);
    report(`  same after git gc ${at}`, mb(packed), mb(tree), ratio(packed, tree), "vs the tree itself");
  }
  fs.rmSync(base, { recursive: true, force: true });
}
