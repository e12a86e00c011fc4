import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { CheckpointManager, CheckpointTask } from "../../core/src/checkpoints/index.js";
import { FileConversation, makeManager, makeSandbox, read, write } from "./helpers.js";
import { nth } from "../helpers/items.js";

// Pre-images: what a file the checkpoints leave out (an excluded folder, an ignored file) was
// before a tool of the task first changed it. A restore puts it back from there; without it the
// user's version would be lost.

function setup() {
  const sb = makeSandbox();
  const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [sb.workspace] });
  const manager = makeManager(sb, { conversation });
  const task: CheckpointTask = { id: "t1", workspaceRoots: [sb.workspace] };
  return { sb, conversation, manager, task, ws: sb.workspace };
}

async function toolWrite(
  manager: CheckpointManager,
  task: CheckpointTask,
  rel: string,
  content: string,
): Promise<void> {
  await manager.beforeEdit?.(task, [rel]);
  write(nth(task.workspaceRoots, 0, "workspace root"), rel, content);
}

describe("a pre-image", () => {
  it("is the file as the checkpoint before saw it: a second edit in the same turn does not replace it", async () => {
    const { manager, task, ws } = setup();
    write(ws, "build/config.cs", "original\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "build/config.cs", "first edit\n");
    await toolWrite(manager, task, "build/config.cs", "second edit\n");
    await manager.saveTurn(task, { editedPaths: ["build/config.cs"] });
    await manager.restore("t1", base.id, "files");
    expect(read(ws, "build/config.cs")).toBe("original\n");
  });

  it("is taken again after each checkpoint: each restore brings back its own checkpoint's version", async () => {
    const { manager, task, ws } = setup();
    write(ws, "build/config.cs", "v1\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "build/config.cs", "v2\n");
    const second = (await manager.saveTurn(task, { editedPaths: ["build/config.cs"] }))!;
    await toolWrite(manager, task, "build/config.cs", "v3\n");
    await manager.saveTurn(task, { editedPaths: ["build/config.cs"] });
    await manager.restore("t1", second.id, "files");
    expect(read(ws, "build/config.cs")).toBe("v2\n");
    await manager.restore("t1", base.id, "files");
    expect(read(ws, "build/config.cs")).toBe("v1\n");
  });

  it("keeps an executable's mode and a symbolic link as a link", async () => {
    const { manager, task, ws } = setup();
    write(ws, "build/run.sh", "#!/bin/sh\necho v1\n");
    fs.chmodSync(path.join(ws, "build/run.sh"), 0o755);
    write(ws, "build/target.txt", "target\n");
    fs.symlinkSync("target.txt", path.join(ws, "build/link"));
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "build/run.sh", "#!/bin/sh\necho v2\n");
    fs.chmodSync(path.join(ws, "build/run.sh"), 0o644);
    await manager.beforeEdit?.(task, ["build/link"]);
    fs.rmSync(path.join(ws, "build/link"));
    write(ws, "build/link", "now a file\n");
    await manager.saveTurn(task, { editedPaths: ["build/run.sh", "build/link"] });
    await manager.restore("t1", base.id, "files");
    expect(read(ws, "build/run.sh")).toBe("#!/bin/sh\necho v1\n");
    expect(fs.statSync(path.join(ws, "build/run.sh")).mode & 0o777).toBe(0o755);
    expect(fs.lstatSync(path.join(ws, "build/link")).isSymbolicLink()).toBe(true);
    expect(fs.readlinkSync(path.join(ws, "build/link"))).toBe("target.txt");
  });

  it("of a file the task created says so: the restore removes it", async () => {
    const { manager, task, ws } = setup();
    write(ws, "src/app.ts", "app\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "build/generated.cs", "made by the task\n");
    await manager.saveTurn(task, { editedPaths: ["build/generated.cs"] });
    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.deletedPaths).toEqual(["build/generated.cs"]);
    expect(fs.existsSync(path.join(ws, "build"))).toBe(false);
  });

  it("is read back by another sidecar (a new manager) and still restores", async () => {
    const { sb, manager, task, ws } = setup();
    write(ws, "build/config.cs", "original\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "build/config.cs", "edited\n");
    await manager.saveTurn(task, { editedPaths: ["build/config.cs"] });
    await manager.stop();
    const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [ws] });
    const other = makeManager(sb, { conversation });
    await other.restore("t1", base.id, "files");
    expect(read(ws, "build/config.cs")).toBe("original\n");
    await other.stop();
  });

  it("shows in Compare, for a file inside a nested repository the checkpoints leave out", async () => {
    const { manager, task, ws } = setup();
    write(ws, "src/app.ts", "app v1\n");
    write(ws, "vendor/nested/n.txt", "nested v1\n");
    write(ws, "vendor/nested/same.txt", "untouched\n");
    execFileSync("git", ["init", "-q"], { cwd: path.join(ws, "vendor/nested") });
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "vendor/nested/n.txt", "nested v2\n");
    // Edited, then written back as it was: no change to show.
    await toolWrite(manager, task, "vendor/nested/same.txt", "changed\n");
    write(ws, "vendor/nested/same.txt", "untouched\n");
    await toolWrite(manager, task, "src/app.ts", "app v2\n");
    await manager.saveTurn(task, { editedPaths: ["vendor/nested/n.txt", "vendor/nested/same.txt", "src/app.ts"] });
    const { files } = await manager.compare("t1", base.id);
    expect(files.map((f) => [f.path, f.status, f.before, f.after]).sort()).toEqual([
      ["src/app.ts", "modified", "app v1\n", "app v2\n"],
      ["vendor/nested/n.txt", "modified", "nested v1\n", "nested v2\n"],
    ]);
    // What Compare shows is what a restore puts back.
    await manager.restore("t1", base.id, "files");
    expect(read(ws, "vendor/nested/n.txt")).toBe("nested v1\n");
  });

  it("of a file the task created where the checkpoints do not look shows it in Compare as added, as a restore deletes it", async () => {
    // Found with a real submodule (zlib under deps/): a file a tool made inside it was deleted by
    // a restore to the baseline, while Compare against that baseline did not list it.
    const { manager, task, ws } = setup();
    write(ws, "src/app.ts", "app v1\n");
    write(ws, "deps/lib/zutil.h", "lib v1\n");
    execFileSync("git", ["init", "-q"], { cwd: path.join(ws, "deps/lib") });
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "deps/lib/agent-new.c", "int made;\n");
    await toolWrite(manager, task, "build/generated.cs", "made by the task\n");
    // Made and then deleted again: nothing to show.
    await toolWrite(manager, task, "deps/lib/gone.c", "brief\n");
    fs.rmSync(path.join(ws, "deps/lib/gone.c"));
    await toolWrite(manager, task, "src/app.ts", "app v2\n");
    const edited = ["deps/lib/agent-new.c", "build/generated.cs", "deps/lib/gone.c", "src/app.ts"];
    await manager.saveTurn(task, { editedPaths: edited });
    const shown = (files: { path: string; status: string; before: string; after: string; notTracked?: boolean }[]) =>
      files.map((f) => [f.path, f.status, f.before, f.after, !!f.notTracked]).sort();
    const expected = [
      ["build/generated.cs", "added", "", "made by the task\n", false],
      ["deps/lib/agent-new.c", "added", "", "int made;\n", false],
      ["src/app.ts", "modified", "app v1\n", "app v2\n", false],
    ];
    const before = await manager.compare("t1", base.id);
    expect(shown(before.files)).toEqual(expected);
    // The confirmation names what the restore then does.
    expect([...before.restorePaths].sort()).toEqual(["build/generated.cs", "deps/lib/agent-new.c", "src/app.ts"]);
    const outcome = await manager.restore("t1", base.id, "files");
    expect([...outcome.deletedPaths].sort()).toEqual(["build/generated.cs", "deps/lib/agent-new.c"]);
    expect(read(ws, "deps/lib/zutil.h")).toBe("lib v1\n");
    // Gone again: neither is listed (deps/lib/ may still be named as a folder whose entries
    // changed since, as the look for left-out changes names such a folder).
    const after = (await manager.compare("t1", base.id)).files.map((f) => f.path);
    expect(after.filter((p) => p !== "deps/lib/")).toEqual([]);
  });

  it("shows in View Changes, for files a tool changed or made inside a nested repository", async () => {
    // View Changes (the last completion against the one before) listed none of them: the
    // snapshots never hold those files.
    const { manager, task, ws } = setup();
    write(ws, "src/app.ts", "app v1\n");
    write(ws, "deps/lib/zutil.h", "lib v1\n");
    write(ws, "deps/lib/old.c", "old\n");
    execFileSync("git", ["init", "-q"], { cwd: path.join(ws, "deps/lib") });
    await manager.ensureBaseline(task);
    await toolWrite(manager, task, "deps/lib/zutil.h", "lib v2\n");
    await manager.saveCompletion(task, { editedPaths: ["deps/lib/zutil.h"] });
    // The task's next run: a second edit of the same file, a new one, and one deleted.
    await toolWrite(manager, task, "deps/lib/zutil.h", "lib v3\n");
    await toolWrite(manager, task, "deps/lib/made.c", "made\n");
    await manager.beforeEdit?.(task, ["deps/lib/old.c"]);
    fs.rmSync(path.join(ws, "deps/lib/old.c"));
    await toolWrite(manager, task, "src/app.ts", "app v2\n");
    const edited = ["deps/lib/zutil.h", "deps/lib/made.c", "deps/lib/old.c", "src/app.ts"];
    await manager.saveTurn(task, { editedPaths: edited });
    await manager.saveCompletion(task, { editedPaths: [] });
    // After the completion: a later edit is not part of what that run changed.
    await toolWrite(manager, task, "deps/lib/zutil.h", "lib v4, later\n");
    const shown = (files: { path: string; status: string; before: string; after: string }[]) =>
      files.map((f) => [f.path, f.status, f.before, f.after]).sort();
    expect(shown((await manager.viewChanges("t1")).files)).toEqual([
      ["deps/lib/made.c", "added", "", "made\n"],
      ["deps/lib/old.c", "deleted", "old\n", ""],
      ["deps/lib/zutil.h", "modified", "lib v2\n", "lib v3\n"],
      ["src/app.ts", "modified", "app v1\n", "app v2\n"],
    ]);
  });

  it("of a file the checkpoints exclude is not listed by Compare or View Changes once its content is back", async () => {
    const { manager, task, ws } = setup();
    write(ws, "build/config.txt", "config v1\n");
    write(ws, ".env", "SECRET=one\n");
    write(ws, "src/app.ts", "app v1\n");
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, "build/config.txt", "config v2\n");
    await toolWrite(manager, task, ".env", "SECRET=two\n");
    // Edited, then written back as it was by the next edit: no change to show.
    await toolWrite(manager, task, "src/app.ts", "app v2\n");
    await manager.saveTurn(task, { editedPaths: ["build/config.txt", ".env", "src/app.ts"] });
    await toolWrite(manager, task, "build/config.txt", "config v1\n");
    await manager.saveCompletion(task, { editedPaths: ["build/config.txt"] });
    const shown = (files: { path: string; status: string; before: string; after: string }[]) =>
      files.map((f) => [f.path, f.status, f.before, f.after]).sort();
    expect(shown((await manager.compare("t1", base.id)).files)).toEqual([
      [".env", "modified", "SECRET=one\n", "SECRET=two\n"],
      ["src/app.ts", "modified", "app v1\n", "app v2\n"],
    ]);
    expect(shown((await manager.viewChanges("t1")).files)).toEqual([
      [".env", "modified", "SECRET=one\n", "SECRET=two\n"],
      ["src/app.ts", "modified", "app v1\n", "app v2\n"],
    ]);
    // Restored to the baseline: nothing differs from it any more, and a restore would change nothing.
    await manager.restore("t1", base.id, "files");
    expect(read(ws, ".env")).toBe("SECRET=one\n");
    const after = await manager.compare("t1", base.id);
    expect(shown(after.files)).toEqual([]);
    expect(after.restorePaths).toEqual([]);
  });

  it("is taken only of paths the latest checkpoint does not hold, and per task", async () => {
    const { sb, manager, task, ws } = setup();
    write(ws, "src/app.ts", "app v1\n");
    write(ws, "build/config.cs", "config v1\n");
    const base = (await manager.ensureBaseline(task))!;
    const other: CheckpointTask = { id: "t2", workspaceRoots: [ws] };
    await manager.ensureBaseline(other);
    // t2 edits the excluded file first: t1's pre-image must still be t1's own.
    await toolWrite(manager, other, "build/config.cs", "config by t2\n");
    await toolWrite(manager, task, "build/config.cs", "config by t1\n");
    await toolWrite(manager, task, "src/app.ts", "app v2\n");
    await manager.saveTurn(task, { editedPaths: ["build/config.cs", "src/app.ts"] });
    await manager.restore("t1", base.id, "files");
    expect(read(ws, "build/config.cs")).toBe("config by t2\n");
    expect(read(ws, "src/app.ts")).toBe("app v1\n");
    void sb;
  });
});
