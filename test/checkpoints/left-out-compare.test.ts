import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { CheckpointTask } from "../../core/src/checkpoints/index.js";
import { FileConversation, makeManager, makeSandbox, read, write } from "./helpers.js";

// What the checkpoints leave out (an ignored .env, a tracked file under build/, files of excluded
// types) and a command changed: a restore leaves it as it is and names it; Compare must show it
// too, and never say "no changes" while it differs. Found in VS Code: after a restore to the
// start, Compare said "no changes" while .env and build/other.js still held the command's writes.

function setup() {
  const sb = makeSandbox();
  const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [sb.workspace] });
  const manager = makeManager(sb, { conversation });
  const task: CheckpointTask = { id: "t1", workspaceRoots: [sb.workspace] };
  return { manager, task, ws: sb.workspace };
}

describe("Compare and what the checkpoints leave out", () => {
  it("lists a command's changes to left-out files as not tracked, before and after a restore that leaves them", async () => {
    const { manager, task, ws } = setup();
    write(ws, ".gitignore", ".env\n");
    write(ws, ".env", "API_KEY=original-key\n");
    write(ws, "build/other.js", "old build\n");
    write(ws, "src/app.js", "app\n");
    const base = (await manager.ensureBaseline(task))!;
    // The command: it rewrites .env and build/other.js, makes dist/, and edits src/app.js.
    write(ws, ".env", "API_KEY=from-command\n");
    write(ws, "build/other.js", "new build\n");
    write(ws, "dist/out.js", "bundle\n");
    write(ws, "src/app.js", "app, built\n");
    await manager.saveTurn(task, { commandRan: true });

    const notTracked = [
      [".env", "modified"],
      ["build/other.js", "modified"],
      ["dist/", "added"],
    ];
    const compare = async () => {
      const { files, restorePaths } = await manager.compare("t1", base.id);
      return {
        tracked: files.filter((f) => !f.notTracked).map((f) => [f.path, f.status]),
        notTracked: files
          .filter((f) => f.notTracked)
          .map((f) => [f.path, f.status])
          .sort(),
        restorePaths,
      };
    };
    expect(await compare()).toEqual({
      tracked: [["src/app.js", "modified"]],
      notTracked,
      restorePaths: ["src/app.js"],
    });
    // No text is shown for them: the checkpoints never had their earlier content.
    const env = (await manager.compare("t1", base.id)).files.find((f) => f.path === ".env")!;
    expect(env).toMatchObject({ before: "", after: "", notTracked: true });

    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.restoredPaths).toEqual(["src/app.js"]);
    expect(read(ws, ".env")).toBe("API_KEY=from-command\n");
    // Before: Compare answered no changes at all here.
    expect(await compare()).toEqual({ tracked: [], notTracked, restorePaths: [] });
  });

  it("a pre-existing left-out file a tool edited is listed once, with its pre-image, not again as not tracked", async () => {
    const { manager, task, ws } = setup();
    write(ws, "build/config.js", "original\n");
    write(ws, "src/app.js", "app\n");
    const base = (await manager.ensureBaseline(task))!;
    await manager.beforeEdit?.(task, ["build/config.js"]);
    write(ws, "build/config.js", "by the tool\n");
    await manager.saveTurn(task, { editedPaths: ["build/config.js"] });
    const { files } = await manager.compare("t1", base.id);
    expect(files.map((f) => [f.path, f.status, f.before, !!f.notTracked])).toEqual([
      ["build/config.js", "modified", "original\n", false],
    ]);
  });
});

describe("left-out folders a command made below the top folder", () => {
  // Found with the Kotlin client: `mkdir -p gen/out lib/dist && echo o > gen/out/a.txt && ...`:
  // a restore to the baseline named only a top-level `out/` kept; gen/out/a.txt and
  // lib/dist/d.js stayed with no word, and Compare listed neither (no skip list names them).
  it("are named kept by the restore, and listed by Compare as not tracked", async () => {
    const { manager, task, ws } = setup();
    write(ws, "lib/index.js", "lib\n");
    write(ws, "gen/.keep", "");
    write(ws, "lib/dist-old/kept.js", "an ignored file from before\n");
    write(ws, ".gitignore", "dist-old/\n");
    const base = (await manager.ensureBaseline(task))!;
    write(ws, "s.txt", "a tool's file\n");
    await manager.saveTurn(task, { editedPaths: ["s.txt"] });
    write(ws, "gen/out/a.txt", "o\n");
    write(ws, "lib/dist/d.js", "d\n");
    write(ws, "out/top.txt", "t\n");
    await manager.saveTurn(task, { commandRan: true });

    const compared = (await manager.compare("t1", base.id)).files.filter((f) => f.notTracked).map((f) => f.path);
    expect(compared.sort()).toEqual(["gen/out/", "lib/dist/", "out/"]);
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual(["s.txt"]);
    expect(outcome.keptPaths.map((k) => k.path).sort()).toEqual(["gen/out/", "lib/dist/", "out/"]);
    expect(read(ws, "gen/out/a.txt")).toBe("o\n");
    // An ignored folder that was there before and nobody changed is not named.
    expect(outcome.keptPaths.some((k) => k.path.startsWith("lib/dist-old"))).toBe(false);
  });
});

describe("a restore past a cut skip list", () => {
  it("says more files may have changed, and names a command's change to a left-out file the list does not name", async () => {
    const { manager, task, ws } = setup();
    // 700 files of an excluded type (tracked by the user's git, left out by the checkpoints):
    // the checkpoint's skip list keeps 500 of them.
    for (let i = 0; i < 700; i++) write(ws, `logs/z${String(i).padStart(3, "0")}.log`, `line ${i}\n`);
    write(ws, "src/app.js", "app\n");
    const base = (await manager.ensureBaseline(task))!;
    expect(base.skippedTotal).toBeGreaterThan(base.skipped.length);
    const unnamed = "logs/z690.log";
    expect(base.skipped.some((s) => s.path === unnamed)).toBe(false);
    write(ws, unnamed, "changed by a command\n");
    fs.rmSync(path.join(ws, "logs/z679.log"));
    write(ws, "src/app.js", "app, changed\n");
    await manager.saveTurn(task, { commandRan: true });

    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.restoredPaths).toEqual(["src/app.js"]);
    // Found by a walk of what is left out now (a command ran since the target); before, unnamed.
    expect(outcome.keptPaths.map((k) => k.path)).toContain(unnamed);
    // Before: false, as if every change the restore left had been named.
    expect(outcome.keptPathsIncomplete).toBe(true);
    expect(read(ws, unnamed)).toBe("changed by a command\n");
  });
});

describe("what a command removed among what the checkpoints leave out", () => {
  // Found in a user pass: a command's `rm ign/a.txt && rm -rf ign/sub && echo new > ign/new.txt`
  // in an ignored folder; the restore named ign/new.txt and ign/c.txt and said that was all.
  it("makes the restore say more may have changed when files were also added there", async () => {
    const { manager, task, ws } = setup();
    write(ws, ".gitignore", "ign/\n");
    write(ws, "ign/a.txt", "a\n");
    write(ws, "ign/sub/b.txt", "b\n");
    write(ws, "ign/c.txt", "c\n");
    write(ws, "src/app.js", "app\n");
    const base = (await manager.ensureBaseline(task))!;
    await new Promise((resolve) => setTimeout(resolve, 20));
    fs.rmSync(path.join(ws, "ign/a.txt"));
    fs.rmSync(path.join(ws, "ign/sub"), { recursive: true });
    write(ws, "ign/new.txt", "new\n");
    fs.appendFileSync(path.join(ws, "ign/c.txt"), "C\n");
    await manager.saveTurn(task, { commandRan: true });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.keptPaths.map((k) => k.path).sort()).toEqual(["ign/c.txt", "ign/new.txt"]);
    expect(outcome.keptPathsIncomplete).toBe(true);
  });

  it("names the folder when only files changed in place are named beside the removal", async () => {
    const { manager, task, ws } = setup();
    write(ws, ".gitignore", "ign/\n");
    write(ws, "ign/a.txt", "a\n");
    write(ws, "ign/c.txt", "c\n");
    write(ws, "src/app.js", "app\n");
    const base = (await manager.ensureBaseline(task))!;
    await new Promise((resolve) => setTimeout(resolve, 20));
    fs.rmSync(path.join(ws, "ign/a.txt"));
    fs.appendFileSync(path.join(ws, "ign/c.txt"), "C\n");
    await manager.saveTurn(task, { commandRan: true });
    const compared = (await manager.compare("t1", base.id)).files.map((f) => [f.path, f.status, !!f.notTracked]);
    expect(compared.sort()).toEqual([
      ["ign/", "modified", true],
      ["ign/c.txt", "modified", true],
    ]);
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.keptPaths.map((k) => k.path).sort()).toEqual(["ign/", "ign/c.txt"]);
  });

  it("keeps naming a folder a command emptied, in which the restore deleted nothing", async () => {
    // dist/ (a built-in exclusion) whose only file a command deleted: Compare named dist/, the
    // restore named nothing, as if it had emptied the folder itself.
    const { manager, task, ws } = setup();
    write(ws, "dist/bundle.js", "bundle\n");
    write(ws, "src/app.js", "app\n");
    const base = (await manager.ensureBaseline(task))!;
    await new Promise((resolve) => setTimeout(resolve, 20));
    fs.rmSync(path.join(ws, "dist/bundle.js"));
    await manager.saveTurn(task, { commandRan: true });
    expect((await manager.compare("t1", base.id)).files.map((f) => [f.path, !!f.notTracked])).toEqual([
      ["dist/", true],
    ]);
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.keptPaths).toEqual([{ path: "dist/", reason: "not_tracked" }]);
  });
});

describe("a folder the task made among what the checkpoints leave out", () => {
  it("is not named kept by a restore that deleted everything in it, nor listed by Compare beside its files", async () => {
    const { manager, task, ws } = setup();
    write(ws, "src/app.js", "app\n");
    const base = (await manager.ensureBaseline(task))!;
    await manager.beforeEdit?.(task, ["node_modules/pkg/index.js", "build/deep/new/gen.js", "src/app.js"]);
    write(ws, "node_modules/pkg/index.js", "module\n");
    write(ws, "build/deep/new/gen.js", "generated\n");
    write(ws, "src/app.js", "app v2\n");
    await manager.saveTurn(task, { editedPaths: ["node_modules/pkg/index.js", "build/deep/new/gen.js", "src/app.js"] });

    const { files } = await manager.compare("t1", base.id);
    expect(files.map((f) => [f.path, f.status]).sort()).toEqual([
      ["build/deep/new/gen.js", "added"],
      ["node_modules/pkg/index.js", "added"],
      ["src/app.js", "modified"],
    ]);
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual(["build/deep/new/gen.js", "node_modules/pkg/index.js"]);
    // Before: kept [node_modules/, build/ ...] "not tracked", though the restore had deleted them.
    expect(outcome.keptPaths).toEqual([]);
    expect(fs.existsSync(path.join(ws, "node_modules"))).toBe(false);
    expect(fs.existsSync(path.join(ws, "build"))).toBe(false);
  });
});

describe("a command that un-ignores a folder", () => {
  // Found from a terminal: a command put back an older .gitignore that no longer named private/;
  // Compare then called the untouched private/p2.md "modified (not tracked by checkpoints)" and
  // the restore said it kept it as it is, while its content and dates were those of before the task.
  it("lists only the files it changed there; an untouched one is neither modified nor kept", async () => {
    const { manager, task, ws } = setup();
    write(ws, ".gitignore", "secret.cfg\nprivate/\n");
    write(ws, "secret.cfg", "user secret\n");
    write(ws, "private/deep/notes.md", "user private\n");
    write(ws, "private/p2.md", "p2\n");
    write(ws, "index.js", "index\n");
    // The checkpoint is taken after the files' last change, as a task's is.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const base = (await manager.ensureBaseline(task))!;
    write(ws, ".gitignore", "");
    fs.appendFileSync(path.join(ws, "secret.cfg"), "changed\n");
    fs.appendFileSync(path.join(ws, "private/deep/notes.md"), "changed\n");
    await manager.saveTurn(task, { commandRan: true });

    const { files, restorePaths } = await manager.compare("t1", base.id);
    expect(files.map((f) => [f.path, f.status, !!f.notTracked]).sort()).toEqual([
      [".gitignore", "modified", false],
      ["private/deep/notes.md", "modified", true],
      ["secret.cfg", "modified", true],
    ]);
    expect(restorePaths).toEqual([".gitignore"]);

    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.keptPaths.map((k) => k.path).sort()).toEqual(["private/deep/notes.md", "secret.cfg"]);
    expect(read(ws, "private/p2.md")).toBe("p2\n");
    expect(read(ws, ".gitignore")).toBe("secret.cfg\nprivate/\n");
  });
});
