// Checkpoint costs on synthetic workspaces of 2,000, 20,000 and 100,000 files (the last skipped
// with BENCH_CHECKPOINTS_QUICK=1), each against a baseline measured in the same run on a copy
// of the same tree:
// - baseline save vs raw `git init && git add -A && git commit` (repeated, alternating);
// - per-turn saves vs the peer strategy: glob the tree for nested `.git`, `git add .` of the
//   whole tree, commit (also shown against `git add . && git commit` alone);
// - restore of the 3 edited files vs `git checkout <commit> -- <paths>`;
// - shadow repository size after 100 turns vs the tree itself;
// - how each cost grows from 2,000 to 100,000 files (the scaling curve).
// Each timed save or restore (ours and the peer's) starts on a flushed disk, and after the
// background packing our saves start (outside the repository lock, while a model would be
// thinking) has ended. Prints figures; asserts nothing.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { CheckpointManager } from "../core/src/checkpoints/index.js";
import { silentLogger } from "../core/src/logging/logger.js";
import { InstanceLayout } from "../core/src/storage/instance-layout.js";
import { fmtMs, median, ratio, report } from "./helpers.js";

const smallestSize = 2_000;
const sizes = [smallestSize, 20_000, ...(process.env.BENCH_CHECKPOINTS_QUICK ? [] : [100_000])];

function makeTree(root: string, files: number): void {
  for (let i = 0; i < files; i++) {
    const dir = path.join(root, `pkg-${Math.floor(i / 1000)}`, `mod-${Math.floor(i / 50) % 20}`);
    if (i % 50 === 0) fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, `file-${i}.ts`),
      `// file ${i}\nexport const value${i} = ${i};\n`.repeat(1 + (i % 7)),
    );
  }
}

/** Plain git on the copy; no automatic gc, whose detached run would load the next measurements. */
function rawGit(cwd: string, ...args: string[]): void {
  execFileSync("git", ["-c", "gc.auto=0", ...args], {
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

/** The peer's first step: every nested `.git` below the root (the peer globs `**\/.git`). */
function globNestedGit(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name === ".git") {
        if (dir !== root) found.push(path.join(dir, e.name));
      } else if (e.isDirectory()) {
        walk(path.join(dir, e.name));
      }
    }
  };
  walk(root);
  return found;
}

/**
 * Flushes what earlier steps left for the disk to write. Each timed save and restore (ours and
 * the peer's alike) starts after one, so it pays for its own writes, not for the write-back of
 * the step before it (the peer's `git add .` rewrites a multi-megabyte index every turn).
 */
function flushDisk(): void {
  execFileSync("sync");
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

interface Figures {
  baseline: number;
  turn: number;
  peerTurn: number;
  cmd: number;
  peerCmd: number;
  restore: number;
}
const curve = new Map<number, Figures>();

for (const n of sizes) {
  console.log(`\n--- ${n.toLocaleString("en")} files`);
  const at = `@${n / 1000}k`;
  const turns = n >= 100_000 ? 8 : 15;
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-cp-bench-"));
  const ws = path.join(base, "workspace");
  const copy = path.join(base, "copy");
  makeTree(ws, n);
  fs.cpSync(ws, copy, { recursive: true });
  const task = { id: "bench", workspaceRoots: [ws] };
  const makeManager = (round: number) => {
    const layout = new InstanceLayout({
      dataRoot: path.join(base, `data-${round}`),
      homeRoot: path.join(base, `h-${round}`),
      documentsRoot: path.join(base, `docs-${round}`),
    });
    const manager = new CheckpointManager({
      layout,
      env: { PATH: process.env.PATH, HOME: base },
      homeDir: path.join(base, "home"),
      logger: silentLogger(),
      budgetCheckEvery: 1_000_000,
    });
    return { layout, manager };
  };

  // Baseline save (a fresh shadow repository each round) vs raw git on the copy (a fresh
  // .git each round), alternating which goes first; the last round's repositories stay.
  const rounds = n >= 100_000 ? 1 : 3;
  const ourBaselines: number[] = [];
  const peerBaselines: number[] = [];
  let current = makeManager(0);
  for (let round = 0; round < rounds; round++) {
    const peerRun = () => {
      fs.rmSync(path.join(copy, ".git"), { recursive: true, force: true, maxRetries: 5 });
      peerBaselines.push(
        time(() => {
          rawGit(copy, "init", "-q");
          rawGit(copy, "add", "-A");
          rawGit(copy, "commit", "-qm", "baseline");
        })[0],
      );
    };
    current = makeManager(round);
    if (round % 2 === 1) peerRun();
    const [ms, cp] = await timeAsync(() => current.manager.ensureBaseline(task));
    if (!cp) throw new Error(JSON.stringify(await current.manager.status({ workspaceRoot: ws })));
    ourBaselines.push(ms);
    // The packing a baseline starts in the background (outside the lock) runs while a model
    // thinks; it is let finish, untimed, so that it does not land inside the next measurement.
    await current.manager.idle();
    if (round % 2 === 0) peerRun();
  }
  const { manager, layout } = current;
  const ourBaseline = median(ourBaselines);
  const peerBaseline = median(peerBaselines);
  report(
    `baseline save (median of ${rounds}) ${at}`,
    fmtMs(ourBaseline),
    fmtMs(peerBaseline),
    ratio(ourBaseline, peerBaseline),
    "<= 1.0x raw git add -A && commit",
  );

  const edited = [0, Math.floor(n / 2), n - 1].map(
    (i) => `pkg-${Math.floor(i / 1000)}/mod-${Math.floor(i / 50) % 20}/file-${i}.ts`,
  );
  const edit = (root: string, turn: number) => {
    for (const p of edited) fs.writeFileSync(path.join(root, p), `// turn ${turn}\nexport const changed = ${turn};\n`);
  };
  const peerSave = (label: string): { full: number; addCommit: number } => {
    const [glob] = time(() => globNestedGit(copy));
    const [addCommit] = time(() => {
      rawGit(copy, "add", ".");
      rawGit(copy, "commit", "-qm", label);
    });
    return { full: glob + addCommit, addCommit };
  };

  // Per-turn save after 3 tool-edited files vs the peer strategy.
  const ours: number[] = [];
  const peer: number[] = [];
  const peerAddCommit: number[] = [];
  for (let t = 1; t <= turns; t++) {
    edit(ws, t);
    edit(copy, t);
    await manager.idle();
    flushDisk();
    ours.push((await timeAsync(() => manager.saveTurn(task, { editedPaths: edited })))[0]);
    flushDisk();
    const p = peerSave(`turn ${t}`);
    peer.push(p.full);
    peerAddCommit.push(p.addCommit);
  }
  const turn = median(ours);
  report(
    `turn save, 3 tool-edited files (median) ${at}`,
    fmtMs(turn),
    fmtMs(median(peer)),
    ratio(turn, median(peer)),
    "< 40 ms, <= 0.10x peer",
  );
  report(
    `  same vs git add . && commit alone ${at}`,
    fmtMs(turn),
    fmtMs(median(peerAddCommit)),
    ratio(turn, median(peerAddCommit)),
    "(info)",
  );

  // Per-turn save after a command changed 3 files (no recorded paths).
  const oursCmd: number[] = [];
  const peerCmd: number[] = [];
  for (let t = 1; t <= turns; t++) {
    edit(ws, 100 + t);
    edit(copy, 100 + t);
    await manager.idle();
    flushDisk();
    oursCmd.push((await timeAsync(() => manager.saveTurn(task, { commandRan: true })))[0]);
    flushDisk();
    peerCmd.push(peerSave(`cmd ${t}`).full);
  }
  const cmd = median(oursCmd);
  report(
    `turn save, command changed 3 files ${at}`,
    fmtMs(cmd),
    fmtMs(median(peerCmd)),
    ratio(cmd, median(peerCmd)),
    "< 60 ms (watched after the first)",
  );

  // Restore of those 3 files (the task recorded them), vs the peer's `git checkout <commit> -- paths`.
  const cps = await manager.list("bench");
  const target = cps[3];
  if (!target) throw new Error(`expected at least 4 checkpoints, found ${cps.length}`);
  const restores: number[] = [];
  const peerRestores: number[] = [];
  for (let r = 0; r < 7; r++) {
    edit(ws, 500 + r);
    edit(copy, 500 + r);
    await manager.idle();
    flushDisk();
    restores.push((await timeAsync(() => manager.restore("bench", target.id, "files")))[0]);
    flushDisk();
    peerRestores.push(time(() => rawGit(copy, "checkout", "HEAD~3", "--", ...edited))[0]);
  }
  const restore = median(restores);
  report(
    `restore of 3 files (median) ${at}`,
    fmtMs(restore),
    fmtMs(median(peerRestores)),
    ratio(restore, median(peerRestores)),
    "< 30 ms at 20k",
  );
  curve.set(n, { baseline: ourBaseline, turn, peerTurn: median(peer), cmd, peerCmd: median(peerCmd), restore });

  if (n === 20_000) {
    for (let t = 1; t <= 100; t++) {
      edit(ws, 1000 + t);
      await manager.saveTurn(task, { editedPaths: edited });
    }
    const gitDir = path.join(layout.checkpointRepoDir(ws), ".git");
    const shadow = dirBytes(gitDir);
    const tree = dirBytes(ws);
    report(
      `disk after 100 more turns (shadow .git) ${at}`,
      mb(shadow),
      mb(tree),
      ratio(shadow, tree),
      "vs the tree itself",
    );
    execFileSync("git", ["--git-dir", gitDir, "gc", "--quiet"], {
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    });
    const packed = dirBytes(gitDir);
    report(`  same after git gc ${at}`, mb(packed), mb(tree), ratio(packed, tree), "vs the tree itself");
  }
  await manager.stop();
  fs.rmSync(base, { recursive: true, force: true, maxRetries: 5 });
}

// Baseline on a tree whose .gitattributes say `* text eol=lf` (a third of the files with CRLF
// line endings), as babel's do: raw git converts line endings and writes loose objects; the
// shadow repository stores bytes as they are and streams them into packs.
{
  const n = 20_000;
  console.log(`\n--- ${n.toLocaleString("en")} files, * text eol=lf`);
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-cp-bench-attr-"));
  const ws = path.join(base, "workspace");
  const copy = path.join(base, "copy");
  makeTree(ws, n);
  fs.writeFileSync(path.join(ws, ".gitattributes"), "* text eol=lf\n");
  for (let i = 0; i < n; i += 3) {
    const file = path.join(ws, `pkg-${Math.floor(i / 1000)}`, `mod-${Math.floor(i / 50) % 20}`, `file-${i}.ts`);
    fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(/\n/g, "\r\n"));
  }
  fs.cpSync(ws, copy, { recursive: true });
  const ours: number[] = [];
  const raw: number[] = [];
  for (let round = 0; round < 3; round++) {
    const peerRun = () => {
      fs.rmSync(path.join(copy, ".git"), { recursive: true, force: true, maxRetries: 5 });
      flushDisk();
      raw.push(
        time(() => ["init -q", "add -A", "commit -qm baseline"].forEach((c) => rawGit(copy, ...c.split(" "))))[0],
      );
    };
    if (round % 2 === 1) peerRun();
    const layout = new InstanceLayout({
      dataRoot: path.join(base, `data-${round}`),
      homeRoot: path.join(base, `h-${round}`),
      documentsRoot: path.join(base, `docs-${round}`),
    });
    const manager = new CheckpointManager({
      layout,
      env: { PATH: process.env.PATH, HOME: base },
      homeDir: path.join(base, "home"),
      logger: silentLogger(),
      budgetCheckEvery: 1_000_000,
    });
    flushDisk();
    const [ms, cp] = await timeAsync(() => manager.ensureBaseline({ id: "bench", workspaceRoots: [ws] }));
    if (!cp) throw new Error("baseline failed");
    ours.push(ms);
    await manager.idle();
    await manager.stop();
    if (round % 2 === 0) peerRun();
  }
  report(
    `baseline save, * text eol=lf (median of 3) @20k`,
    fmtMs(median(ours)),
    fmtMs(median(raw)),
    ratio(median(ours), median(raw)),
    "<= 1.0x raw git add -A && commit",
  );
  fs.rmSync(base, { recursive: true, force: true, maxRetries: 5 });
}

// The scaling curve: each cost at n files against the same cost at 2,000 files (flat = 1x).
console.log("\n--- scaling from 2,000 files");
const first = curve.get(smallestSize)!;
for (const n of sizes.slice(1)) {
  const f = curve.get(n)!;
  const at = `@${n / 1000}k vs @2k`;
  report(`curve: turn save, tool edits ${at}`, fmtMs(f.turn), fmtMs(first.turn), ratio(f.turn, first.turn), "flat");
  report(
    `curve: peer turn save ${at}`,
    fmtMs(f.peerTurn),
    fmtMs(first.peerTurn),
    ratio(f.peerTurn, first.peerTurn),
    "(info)",
  );
  report(`curve: turn save, command ${at}`, fmtMs(f.cmd), fmtMs(first.cmd), ratio(f.cmd, first.cmd), "(info)");
  report(
    `curve: peer command save ${at}`,
    fmtMs(f.peerCmd),
    fmtMs(first.peerCmd),
    ratio(f.peerCmd, first.peerCmd),
    "(info)",
  );
  report(
    `curve: restore of 3 files ${at}`,
    fmtMs(f.restore),
    fmtMs(first.restore),
    ratio(f.restore, first.restore),
    "flat",
  );
  report(
    `curve: baseline save ${at}`,
    fmtMs(f.baseline),
    fmtMs(first.baseline),
    ratio(f.baseline, first.baseline),
    "(info) grows with the tree",
  );
}
