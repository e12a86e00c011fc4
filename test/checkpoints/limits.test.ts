import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { CHECKPOINT_MESSAGES, type CheckpointStatus } from "../../core/src/checkpoints/index.js";
import { FileConversation, makeManager, makeSandbox, read, write } from "./helpers.js";
import { gitShimBeforeStatus } from "../helpers/git-shim.js";

/**
 * A `git` earlier on PATH whose `status` (a large repository's scan) is slow while a flag file
 * exists: it waits `seconds` and then runs, or with `hang` never finishes (it becomes the sleep,
 * so killing it on timeout leaves nothing behind).
 */
function slowGitPath(
  sb: ReturnType<typeof makeSandbox>,
  seconds: number,
  hang = false,
): { flag: string; PATH: string } {
  const flag = path.join(sb.base, "git-is-slow");
  const wait = hang ? `exec sleep ${seconds}` : `sleep ${seconds}`;
  const PATH = gitShimBeforeStatus(path.join(sb.base, "slow-bin"), `[ -f "${flag}" ] && ${wait}`);
  fs.writeFileSync(flag, "");
  return { flag, PATH };
}

describe("workspaces checkpoints refuse", () => {
  it("the home, Desktop, Documents and Downloads folders, with the spec's sentence", async () => {
    const sb = makeSandbox();
    const manager = makeManager(sb);
    for (const [dir, name] of [
      [sb.home, "home"],
      [path.join(sb.home, "Desktop"), "Desktop"],
      [path.join(sb.home, "Documents"), "Documents"],
      [path.join(sb.home, "Downloads"), "Downloads"],
    ] as const) {
      fs.mkdirSync(dir, { recursive: true });
      write(dir, "file.txt", "x");
      expect(await manager.ensureBaseline({ id: `t-${name}`, workspaceRoots: [dir] })).toBeUndefined();
      const status = await manager.status({ workspaceRoot: dir + "/" });
      expect(status).toMatchObject({ state: "unavailable", message: `Cannot use checkpoints in ${name} directory` });
    }
    // Nothing was created for them.
    expect(fs.existsSync(sb.layout.checkpointsDir)).toBe(false);
    // A project folder inside the home folder is fine.
    expect(await manager.ensureBaseline({ id: "ok", workspaceRoots: [sb.workspace] })).toBeDefined();
  });

  it("those folders opened through a link too, while a link to a project folder is fine", async () => {
    // Found by reading the guard: it compared the path as given, so a link to the home folder
    // opened as a project made the checkpoints scan the whole home.
    const sb = makeSandbox();
    const manager = makeManager(sb);
    const links = path.join(sb.base, "links");
    fs.mkdirSync(path.join(sb.home, "Documents"), { recursive: true });
    fs.mkdirSync(links);
    for (const [target, name] of [
      [sb.home, "home"],
      [path.join(sb.home, "Documents"), "Documents"],
    ] as const) {
      const link = path.join(links, `to-${name}`);
      fs.symlinkSync(target, link);
      expect(await manager.ensureBaseline({ id: `t-${name}`, workspaceRoots: [link] })).toBeUndefined();
      const status = await manager.status({ workspaceRoot: link });
      expect(status).toMatchObject({ state: "unavailable", message: `Cannot use checkpoints in ${name} directory` });
    }
    expect(fs.existsSync(sb.layout.checkpointsDir)).toBe(false);
    const project = path.join(links, "to-project");
    fs.symlinkSync(sb.workspace, project);
    write(sb.workspace, "a.txt", "x");
    expect(await manager.ensureBaseline({ id: "ok", workspaceRoots: [project] })).toBeDefined();
  });

  it("no workspace and multi-root workspaces", async () => {
    const sb = makeSandbox();
    const manager = makeManager(sb);
    expect(await manager.ensureBaseline({ id: "none", workspaceRoots: [] })).toBeUndefined();
    expect(await manager.ensureBaseline({ id: "multi", workspaceRoots: [sb.workspace, sb.base] })).toBeUndefined();
    await expect(manager.retry({ workspaceRoot: "" })).rejects.toMatchObject({ code: "invalid_argument" });
    expect(CHECKPOINT_MESSAGES.noWorkspace).toBe(
      "No workspace detected. Please open Dline in a workspace to use checkpoints.",
    );
    expect(CHECKPOINT_MESSAGES.multiRoot).toBe("Checkpoints are not currently supported in multi-root workspaces.");
    expect(fs.existsSync(sb.layout.checkpointsDir)).toBe(false);
  });

  it("a machine without git", async () => {
    const sb = makeSandbox();
    sb.env.PATH = path.join(sb.base, "empty-bin");
    const manager = makeManager(sb);
    expect(await manager.ensureBaseline({ id: "t", workspaceRoots: [sb.workspace] })).toBeUndefined();
    const status = await manager.status({ workspaceRoot: sb.workspace });
    expect(status).toMatchObject({
      state: "unavailable",
      message: "Git must be installed to use checkpoints.",
      canRetry: true,
    });
  });

  it("a machine without git: listing, Compare, View Changes and Restore say so (failed_precondition), not an internal error", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "a v1\n");
    const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [sb.workspace] });
    const task = { id: "t1", workspaceRoots: [sb.workspace] };
    // Checkpoints saved while git was there; then git is gone (uninstalled, another PATH).
    const withGit = makeManager(sb, { conversation });
    const base = (await withGit.ensureBaseline(task))!;
    await withGit.stop();
    const gitless = makeManager({ ...sb, env: { ...sb.env, PATH: path.join(sb.base, "empty-bin") } }, { conversation });
    // One at a time: a call made before the one before it was awaited would reject unheard.
    const calls = [
      () => gitless.list("t1"),
      () => gitless.compare("t1", base.id),
      () => gitless.viewChanges("t1"),
      () => gitless.restore("t1", base.id, "files"),
    ];
    for (const call of calls)
      await expect(call()).rejects.toMatchObject({
        code: "failed_precondition",
        message: "Git must be installed to use checkpoints.",
      });
    expect(read(sb.workspace, "a.txt")).toBe("a v1\n");
  });
});

describe("initialization", () => {
  it("prepareWorkspace initializes at once; the new task's baseline right after takes that scan", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "a");
    // A git that notes each status it runs (the scan of the workspace).
    const log = path.join(sb.base, "statuses.log");
    sb.env.PATH = gitShimBeforeStatus(path.join(sb.base, "counting-bin"), `echo status >> "${log}"`);
    const events: CheckpointStatus[] = [];
    const manager = makeManager(sb, { onStatus: (_ws, s) => events.push(s) });
    manager.prepareWorkspace(sb.workspace);
    await vi.waitFor(() => expect(events.map((e) => e.state)).toContain("initializing"));
    const base = await manager.ensureBaseline({ id: "t", workspaceRoots: [sb.workspace] });
    expect(base).toBeDefined();
    expect(fs.readFileSync(log, "utf8").trim().split("\n")).toEqual(["status"]);
    // Nothing for a folder checkpoints refuse (the home folder): no throw, no repository.
    manager.prepareWorkspace(sb.home);
  });

  it("reports a slow initialization, then becomes ready", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "a");
    const slow = slowGitPath(sb, 1.5);
    sb.env.PATH = slow.PATH;
    const events: CheckpointStatus[] = [];
    const manager = makeManager(sb, { slowInitMs: 300, onStatus: (_ws, s) => events.push(s) });
    const base = await manager.ensureBaseline({ id: "t", workspaceRoots: [sb.workspace] });
    expect(base).toBeDefined();
    // Progress reports repeat a state (scanning, then staging n of m): the states in turn.
    const states = events.map((e) => e.state).filter((s, i, all) => s !== all[i - 1]);
    expect(states).toEqual(["initializing", "slow", "ready"]);
    const slowEvent = events.find((e) => e.state === "slow")!;
    expect(slowEvent.message).toBe(CHECKPOINT_MESSAGES.slowInit);
    expect(slowEvent.message).toMatch(/large repository/);
    expect(slowEvent.canDisable).toBe(true);
    expect(events.filter((e) => e.progress).map((e) => e.progress!.phase)).toContain("scanning");
    // Turning slow keeps how far the scan is (a client's progress line must not go blank).
    expect(slowEvent.progress?.phase).toBe("scanning");
  });

  it("times out, offers Retry and Disable, and recovers on Retry", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "a");
    const slow = slowGitPath(sb, 60, true);
    sb.env.PATH = slow.PATH;
    const manager = makeManager(sb, { slowInitMs: 200, initTimeoutMs: 3000 });
    const task = { id: "t", workspaceRoots: [sb.workspace] };
    expect(await manager.ensureBaseline(task)).toBeUndefined();
    let status = await manager.status({ workspaceRoot: sb.workspace });
    expect(status).toMatchObject({
      state: "failed",
      message: CHECKPOINT_MESSAGES.initTimeout,
      canRetry: true,
      canDisable: true,
    });
    // Saves while failed do nothing and do not throw.
    expect(await manager.saveTurn(task, { editedPaths: ["a.txt"] })).toBeUndefined();
    fs.rmSync(slow.flag);
    status = await manager.retry({ workspaceRoot: sb.workspace });
    expect(status.state).toBe("ready");
    expect(await manager.ensureBaseline(task)).toBeDefined();
    await manager.disable({ workspaceRoot: sb.workspace });
    expect((await manager.status({ workspaceRoot: sb.workspace })).state).toBe("disabled");
    expect(await manager.saveTurn(task, { editedPaths: ["a.txt"] })).toBeUndefined();
  });

  it("a failed save is reported, and the next save tries again", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "a");
    const manager = makeManager(sb);
    const task = { id: "t", workspaceRoots: [sb.workspace] };
    expect(await manager.ensureBaseline(task)).toBeDefined();
    fs.renameSync(sb.workspace, sb.workspace + "-moved");
    expect(await manager.saveTurn(task, { commandRan: true })).toBeUndefined();
    const failed = await manager.status({ workspaceRoot: sb.workspace });
    expect(failed.state).toBe("failed");
    expect(failed.message).toMatch(/does not exist/);
    fs.renameSync(sb.workspace + "-moved", sb.workspace);
    write(sb.workspace, "a.txt", "b");
    expect(await manager.saveTurn(task, { commandRan: true })).toBeDefined();
    expect((await manager.status({ workspaceRoot: sb.workspace })).state).toBe("ready");
  });

  it("the checkpoints setting turns the feature off", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "a");
    const manager = makeManager(sb, { isEnabled: () => false });
    expect(await manager.ensureBaseline({ id: "t", workspaceRoots: [sb.workspace] })).toBeUndefined();
    expect((await manager.status({ workspaceRoot: sb.workspace })).state).toBe("disabled");
    expect(fs.existsSync(sb.layout.checkpointsDir)).toBe(false);
  });
});

describe("what snapshots leave out", () => {
  it("records excluded types, ignored files, LFS patterns, nested repositories and large files, with why", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, ".gitignore", "private/\n");
    write(ws, ".gitattributes", "*.weights filter=lfs diff=lfs merge=lfs -text\n");
    write(ws, "src/index.ts", "code");
    write(ws, "node_modules/pkg/index.js", "dep");
    write(ws, "app.log", "log line");
    write(ws, "photo.png", Buffer.from([137, 80, 78, 71]));
    write(ws, ".env", "SECRET=1");
    write(ws, "data/cities.csv", "a,b");
    write(ws, "private/notes.txt", "mine");
    write(ws, "model.weights", "lfs pointer or data");
    write(ws, "nested/.git/HEAD", "ref: refs/heads/main\n");
    write(ws, "nested/file.txt", "inside");
    write(ws, "big.txt", Buffer.alloc(2048, 97));
    const manager = makeManager(sb, { sizeLimitBytes: 1024 });
    const task = { id: "t", workspaceRoots: [ws] };
    const base = (await manager.ensureBaseline(task))!;
    const reasons = Object.fromEntries(base.skipped.map((s) => [s.path, s.reason]));
    expect(reasons).toEqual({
      node_modules: "excluded_type",
      "app.log": "excluded_type",
      "photo.png": "excluded_type",
      ".env": "excluded_type",
      "data/cities.csv": "excluded_type",
      private: "ignored",
      "model.weights": "lfs",
      nested: "nested_repository",
      "big.txt": "size",
    });
    const { files, skipped } = await manager.compare("t", base.id);
    expect(files).toEqual([]);
    expect(skipped).toEqual(base.skipped);
    const status = await manager.status({ taskId: "t" });
    expect(status.skipped).toEqual(base.skipped);
    expect(status.repositorySizeBytes).toBeGreaterThan(0);

    // A file an editing tool wrote is force-added even when ignored; over the limit it is still left out.
    // It existed before (ignored), so Compare calls it modified, never added.
    write(ws, "private/notes.txt", "edited by the task");
    write(ws, "big.txt", Buffer.alloc(4096, 98));
    const turn = (await manager.saveTurn(task, { editedPaths: ["private/notes.txt", "big.txt"] }))!;
    expect(turn.skipped).toContainEqual({ path: "big.txt", reason: "size" });
    const after = await manager.compare("t", base.id);
    // big.txt changed too: left out, its earlier content unknown, listed as not tracked.
    expect(after.files.map((f) => [f.path, f.status, f.notTracked])).toEqual([
      ["private/notes.txt", "modified", true],
      ["big.txt", "modified", true],
    ]);
  });

  it("leaves out folders by the folder patterns and names that may be folders, but not a folder named like a file type", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, "src/index.ts", "code");
    // File types name files: a folder of such a name is scanned, its files of those types still left out.
    write(ws, "screenshots.png/notes.md", "what the shots show");
    write(ws, "screenshots.png/home.png", Buffer.from([137, 80, 78, 71]));
    write(ws, "data.csv/README.md", "how the data was made");
    write(ws, "lib/archive.zip/inner.txt", "an unpacked zip kept under its name");
    // Names that are folders as well as files stay out whole.
    write(ws, ".env/lib/site.py", "a virtualenv named .env");
    write(ws, "deploy/app.war/WEB-INF/web.xml", "<web-app/>");
    write(ws, "src.bak/index.ts", "a copy");
    write(ws, "parcels.gdb/a0000001.gdbtable", "geodatabase");
    write(ws, "node_modules/pkg/index.js", "dep");
    const manager = makeManager(sb);
    const base = (await manager.ensureBaseline({ id: "t", workspaceRoots: [ws] }))!;
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");
    const files = execFileSync("git", ["--git-dir", gitDir, "ls-tree", "-r", "--name-only", base.id], {
      encoding: "utf8",
    })
      .split("\n")
      .filter(Boolean);
    expect(files.sort()).toEqual(
      ["data.csv/README.md", "lib/archive.zip/inner.txt", "screenshots.png/notes.md", "src/index.ts"].sort(),
    );
    expect(Object.fromEntries(base.skipped.map((s) => [s.path, s.reason]))).toEqual({
      "screenshots.png/home.png": "excluded_type",
      ".env": "excluded_type",
      "deploy/app.war": "excluded_type",
      "src.bak": "excluded_type",
      "parcels.gdb": "excluded_type",
      node_modules: "excluded_type",
    });
  });

  it("never names the temporary file of an edit being written while the baseline scans (gone a moment later)", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, "source/utilities.js", "code\n");
    write(ws, "notes.tmp", "the person's own temp file\n");
    // A first edit does not wait for the baseline: its file is written through a temporary file
    // beside it (storage/atomic-file.ts), named after the writing process, while the scan runs.
    const inFlight = `source/.utilities.js.${process.pid}.7.tmp`;
    write(ws, inFlight, "// rewritten\n");
    const manager = makeManager(sb);
    const task = { id: "t", workspaceRoots: [ws] };
    const base = (await manager.ensureBaseline(task))!;
    fs.renameSync(path.join(ws, inFlight), path.join(ws, "source/utilities.js"));
    await manager.saveTurn(task, { editedPaths: ["source/utilities.js"] });
    // Before: the baseline's list, and every later one, named it; compare listed it as not
    // tracked and a restore said it kept it as is, a file the person never had.
    expect(base.skipped).toEqual([{ path: "notes.tmp", reason: "excluded_type" }]);
    const { skipped } = await manager.compare("t", base.id);
    expect(skipped.map((s) => s.path)).toEqual(["notes.tmp"]);
    const restored = await manager.restore("t", base.id, "files");
    expect(restored.restoredPaths).toEqual(["source/utilities.js"]);
    expect(restored.keptPaths).toEqual([]);
    expect(fs.readFileSync(path.join(ws, "source/utilities.js"), "utf8")).toBe("code\n");
  });
});

describe("a file a command grew past what a restore's undo can keep", () => {
  // From a bug hunt: Compare listed a file grown past 20 MB (four times the size limit) among
  // those a files restore puts back; the restore then left it, "kept as is: too large to snapshot".
  it("is listed by Compare, but not among what a files restore changes; the restore leaves it, as Compare said", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, "grow.txt", "small original\n");
    write(ws, "small.txt", "small original\n");
    const manager = makeManager(sb, { sizeLimitBytes: 1024 });
    const task = { id: "t", workspaceRoots: [ws] };
    const base = (await manager.ensureBaseline(task))!;
    // A command appends: one file grows past four times the limit, the other stays small.
    write(ws, "grow.txt", Buffer.concat([Buffer.from("small original\n"), Buffer.alloc(5000, 98)]));
    write(ws, "small.txt", "small, changed\n");
    await manager.saveTurn(task, { commandRan: true });

    const compared = await manager.compare("t", base.id);
    expect(compared.files.map((f) => [f.path, f.status, f.tooLarge]).sort()).toEqual([
      ["grow.txt", "modified", true],
      ["small.txt", "modified", false],
    ]);
    expect(compared.restorePaths).toEqual(["small.txt"]);
    const restored = await manager.restore("t", base.id, "files");
    expect(restored.restoredPaths).toEqual(["small.txt"]);
    expect(fs.statSync(path.join(ws, "grow.txt")).size).toBe(5015);
  });
});
