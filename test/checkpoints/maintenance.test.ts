import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { makeManager, makeSandbox, write } from "./helpers.js";
import { nth } from "../helpers/items.js";
import { createLogger } from "../../core/src/logging/logger.js";

/** A logger keeping what it is told, to show in a failure's message (background packing only logs). */
function keptLogger() {
  const lines: string[] = [];
  return { lines, logger: createLogger({ write: (l) => lines.push(l.trim()), close: () => {} }, "debug") };
}

/** Loose objects of a repository, counted file by file. */
function looseObjects(gitDir: string): number {
  const objects = path.join(gitDir, "objects");
  return fs
    .readdirSync(objects)
    .filter((d) => /^[0-9a-f]{2}$/.test(d))
    .reduce((n, d) => n + fs.readdirSync(path.join(objects, d)).length, 0);
}

/** Turns every pack of a repository back into loose objects. */
function unpackAll(gitDir: string, aside: string): void {
  fs.mkdirSync(aside, { recursive: true });
  const packDir = path.join(gitDir, "objects", "pack");
  for (const name of fs.readdirSync(packDir)) fs.renameSync(path.join(packDir, name), path.join(aside, name));
  for (const name of fs.readdirSync(aside).filter((n) => n.endsWith(".pack"))) {
    execFileSync("git", ["--git-dir", gitDir, "unpack-objects", "-q"], {
      input: fs.readFileSync(path.join(aside, name)),
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    });
  }
}

describe("packing runs outside the repository lock", () => {
  it("a size-budget check packs nothing under the lock; a later process packs what an earlier one left loose", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    // 7,000 folders: the baseline leaves one loose tree object each, past git's `gc --auto` threshold.
    for (let i = 0; i < 7000; i++) write(ws, `m${Math.floor(i / 100)}/d${i}/f.ts`, `export const x = ${i};\n`);
    write(ws, "src/a.ts", "a\n");
    const task = { id: "t1", workspaceRoots: [ws] };
    const first = makeManager(sb);
    await first.ensureBaseline(task);
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");
    // Whatever this process packed after its save, the objects are made loose again: the state a
    // long run of saves leaves behind, with nothing running in the background.
    await first.idle?.();
    unpackAll(gitDir, path.join(sb.base, "packs-aside"));
    const before = looseObjects(gitDir);
    expect(before).toBeGreaterThan(7000);

    // The periodic budget check (under the lock, in the middle of a task's saves) leaves packing alone.
    await first.enforceBudget(ws);
    expect(looseObjects(gitDir)).toBe(before);

    // The next process (each CLI run is one) opens the repository and packs in the background.
    const second = makeManager(sb);
    await second.list("t1");
    await second.idle?.();
    expect(looseObjects(gitDir)).toBeLessThan(100);
    // Nothing was lost: the checkpoint still restores.
    const base = nth(await second.list("t1"), 0, "checkpoint");
    write(ws, "src/a.ts", "changed\n");
    await second.saveTurn(task, { editedPaths: ["src/a.ts"] });
    await second.restore("t1", base.id, "files");
    expect(fs.readFileSync(path.join(ws, "src/a.ts"), "utf8")).toBe("a\n");
  });

  it("folding the turns' many small packs together leaves the baseline's large pack as it is", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    for (let i = 0; i < 600; i++) write(ws, `m${i % 30}/f${i}.ts`, `export const x = ${i};\n`);
    const task = { id: "t1", workspaceRoots: [ws] };
    const log = keptLogger();
    const manager = makeManager(sb, { logger: log.logger });
    const base = (await manager.ensureBaseline(task))!;
    await manager.idle();
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");
    const packDir = path.join(gitDir, "objects", "pack");
    const packs = () => fs.readdirSync(packDir).filter((n) => n.endsWith(".pack"));
    const sizeOf = (n: string) => fs.statSync(path.join(packDir, n)).size;
    const largest = packs().sort((a, b) => sizeOf(b) - sizeOf(a))[0]!;
    // Each turn save writes a pack of its own; past 32 they are folded together in the background,
    // in an editor's sidecar once the task is complete: not while its turns go on.
    for (let turn = 0; turn < 34; turn++) {
      write(ws, `m${turn % 30}/f${turn}.ts`, `turn ${turn}\n`);
      await manager.saveTurn(task, { editedPaths: [`m${turn % 30}/f${turn}.ts`] });
    }
    await manager.idle();
    expect(packs().length, log.lines.join("\n")).toBeGreaterThan(34);
    await manager.saveCompletion(task);
    await manager.idle();
    expect(packs().length, log.lines.join("\n")).toBeLessThan(8);
    // No list of every ref for dumb HTTP clients (git's update-server-info) was written: with
    // a workspace's tasks' refs in the thousands it was most of a packing's time.
    expect(fs.existsSync(path.join(gitDir, "info", "refs"))).toBe(false);
    // Only the small packs were rewritten: the baseline's objects were not copied again.
    expect(packs()).toContain(largest);
    expect(fs.existsSync(path.join(gitDir, "objects", "info", "packs"))).toBe(false);
    // A repository an older version packed keeps the lists that packing wrote (every ref, every
    // pack of the time, long gone since): the next fold removes them.
    execFileSync("git", ["--git-dir", gitDir, "update-server-info"], {
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    });
    expect(fs.readFileSync(path.join(gitDir, "info", "refs"), "utf8")).toContain("refs/dline/tasks/t1/");
    for (let turn = 0; turn < 34; turn++) {
      write(ws, `m${turn % 30}/f${turn}.ts`, `again ${turn}\n`);
      await manager.saveTurn(task, { editedPaths: [`m${turn % 30}/f${turn}.ts`] });
    }
    await manager.saveCompletion(task);
    await manager.idle();
    expect(packs().length, log.lines.join("\n")).toBeLessThan(8);
    expect(fs.existsSync(path.join(gitDir, "info", "refs"))).toBe(false);
    expect(fs.existsSync(path.join(gitDir, "objects", "info", "packs"))).toBe(false);
    // The folder's own files stay (the exclusions and attributes the scans use).
    expect(fs.existsSync(path.join(gitDir, "info", "attributes"))).toBe(true);
    execFileSync("git", ["--git-dir", gitDir, "fsck", "--no-dangling", "--no-progress"], {
      env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    });
    await manager.restore("t1", base.id, "files");
    expect(fs.readFileSync(path.join(ws, "m3/f3.ts"), "utf8")).toBe("export const x = 3;\n");
    await manager.stop();
  });

  it("the CLI's sidecar folds the packs while the task goes on; an editor's only past a pile four times as high", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    for (let i = 0; i < 300; i++) write(ws, `m${i % 30}/f${i}.ts`, `export const x = ${i};\n`);
    const turns = async (
      manager: ReturnType<typeof makeManager>,
      task: { id: string; workspaceRoots: string[] },
      n: number,
    ) => {
      for (let turn = 0; turn < n; turn++) {
        write(ws, `m${turn % 30}/f${turn}.ts`, `${task.id} turn ${turn}\n`);
        await manager.saveTurn(task, { editedPaths: [`m${turn % 30}/f${turn}.ts`] });
      }
      await manager.idle();
    };
    const packDir = path.join(sb.layout.checkpointRepoDir(ws), ".git", "objects", "pack");
    const packs = () => fs.readdirSync(packDir).filter((n) => n.endsWith(".pack")).length;
    const cli = makeManager(sb, { watchBetweenTasks: false });
    const first = { id: "t1", workspaceRoots: [ws] };
    await cli.ensureBaseline(first);
    await turns(cli, first, 34);
    expect(packs()).toBeLessThan(8);
    await cli.stop();
    const editor = makeManager(sb);
    const long = { id: "t2", workspaceRoots: [ws] };
    await editor.ensureBaseline(long);
    await turns(editor, long, 40);
    expect(packs()).toBeGreaterThan(40);
    await turns(editor, long, 100);
    expect(packs()).toBeLessThan(40);
    await editor.stop();
  });

  it("a packing that fails while saves go on is tried again once it ends, not left for a next save", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    for (let i = 0; i < 300; i++) write(ws, `m${i % 30}/f${i}.ts`, `export const x = ${i};\n`);
    // git as found on PATH, but its first repack waits until told, then fails: the saves of the
    // turns after the one that started it are made while it runs.
    const bin = path.join(sb.base, "bin");
    const go = path.join(sb.base, "go");
    const failedOnce = path.join(sb.base, "failed-once");
    const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    fs.mkdirSync(bin);
    fs.writeFileSync(
      path.join(bin, "git"),
      [
        "#!/bin/sh",
        `case " $* " in *" repack "*) if [ ! -e '${failedOnce}' ]; then : > '${failedOnce}';`,
        `  n=0; while [ ! -e '${go}' ] && [ $n -lt 600 ]; do sleep 0.05; n=$((n+1)); done; exit 1; fi;; esac`,
        `exec '${realGit}' "$@"`,
      ].join("\n") + "\n",
      { mode: 0o755 },
    );
    sb.env.PATH = `${bin}:${sb.env.PATH}`;
    const task = { id: "t1", workspaceRoots: [ws] };
    const log = keptLogger();
    // The CLI's sidecar: it packs while the task goes on.
    const manager = makeManager(sb, { logger: log.logger, watchBetweenTasks: false });
    await manager.ensureBaseline(task);
    await manager.idle();
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");
    const packDir = path.join(gitDir, "objects", "pack");
    const packs = () => fs.readdirSync(packDir).filter((n) => n.endsWith(".pack"));
    for (let turn = 0; turn < 34; turn++) {
      write(ws, `m${turn % 30}/f${turn}.ts`, `turn ${turn}\n`);
      await manager.saveTurn(task, { editedPaths: [`m${turn % 30}/f${turn}.ts`] });
    }
    // The packing that the 32nd pack started is still waiting: every turn was saved meanwhile.
    expect(fs.existsSync(failedOnce)).toBe(true);
    fs.writeFileSync(go, "");
    await manager.idle();
    expect(log.lines.some((l) => l.includes("packing checkpoint objects failed"))).toBe(true);
    expect(packs().length, log.lines.join("\n")).toBeLessThan(8);
    await manager.stop();
  });
});
