import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { git, makeManager, makeSandbox, read, treeDigest, write } from "./helpers.js";

function shadowGit(gitDir: string, ...args: string[]): string {
  return execFileSync("git", ["--git-dir", gitDir, ...args], {
    env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    encoding: "utf8",
  });
}

describe("isolation from the user's git", () => {
  it("never writes the project's .git, nested repositories or submodules, and commits as Dline Checkpoint", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    // The user's global config asks for signing, another identity and a hook that leaves a mark.
    const marker = path.join(sb.base, "hook-ran");
    const hooks = path.join(sb.home, "hooks");
    write(hooks, "pre-commit", `#!/bin/sh\ntouch ${marker}\n`);
    write(hooks, "post-commit", `#!/bin/sh\ntouch ${marker}\n`);
    fs.chmodSync(path.join(hooks, "pre-commit"), 0o755);
    fs.chmodSync(path.join(hooks, "post-commit"), 0o755);
    write(
      sb.home,
      ".gitconfig",
      `[user]\n\tname = Someone Else\n\temail = else@example.com\n[commit]\n\tgpgsign = true\n[core]\n\thooksPath = ${hooks}\n`,
    );
    // Variables a parent git process might leave set are dropped too.
    sb.env.GIT_DIR = path.join(ws, ".git");
    sb.env.GIT_INDEX_FILE = path.join(ws, ".git", "index");

    // The project: its own repository with a commit, a submodule, and an untracked nested repository.
    const libRepo = path.join(sb.base, "lib-origin");
    fs.mkdirSync(libRepo);
    git(libRepo, "init", "-q");
    write(libRepo, "lib.txt", "library");
    git(libRepo, "add", "-A");
    git(libRepo, "commit", "-qm", "lib");
    git(ws, "init", "-q");
    write(ws, "src/main.ts", "console.log(1)\n");
    git(ws, "add", "-A");
    git(ws, "commit", "-qm", "initial");
    git(ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", libRepo, "vendored/lib");
    git(ws, "commit", "-qm", "submodule");
    fs.mkdirSync(path.join(ws, "experiments/nested"), { recursive: true });
    git(path.join(ws, "experiments/nested"), "init", "-q");
    write(ws, "experiments/nested/inner.txt", "inner v1");
    write(ws, "src/staged.ts", "staged in the project index");
    git(ws, "add", "src/staged.ts");

    const projectGitBefore = treeDigest(path.join(ws, ".git"));
    const submoduleBefore = treeDigest(path.join(ws, "vendored/lib"));
    const nestedBefore = treeDigest(path.join(ws, "experiments/nested"));
    const projectObjects = git(ws, "count-objects", "-v");

    const manager = makeManager(sb);
    const task = { id: "iso", workspaceRoots: [ws] };
    const base = (await manager.ensureBaseline(task))!;
    expect(base).toBeDefined();
    expect(base.skipped).toEqual(
      expect.arrayContaining([
        { path: "experiments/nested", reason: "nested_repository" },
        { path: "vendored/lib", reason: "nested_repository" },
      ]),
    );
    write(ws, "src/main.ts", "console.log(2)\n");
    // An editing tool wrote inside the nested repository: still skipped, nothing inside touched.
    write(ws, "experiments/nested/inner.txt", "inner v2");
    const turn = (await manager.saveTurn(task, { editedPaths: ["src/main.ts", "experiments/nested/inner.txt"] }))!;
    expect(turn.skipped).toContainEqual({ path: "experiments/nested/inner.txt", reason: "nested_repository" });
    await manager.saveTurn(task, { commandRan: true });
    await manager.restore("iso", base.id, "files");
    expect(read(ws, "src/main.ts")).toBe("console.log(1)\n");
    write(ws, "src/main.ts", "console.log(3)\n");
    await manager.saveTurn(task, { commandRan: true });
    await manager.restore("iso", base.id, "files");
    await manager.compare("iso", base.id);

    expect(treeDigest(path.join(ws, ".git"))).toEqual(projectGitBefore);
    expect(git(ws, "count-objects", "-v")).toBe(projectObjects);
    expect(treeDigest(path.join(ws, "vendored/lib"))).toEqual(submoduleBefore);
    const nestedAfter = treeDigest(path.join(ws, "experiments/nested"));
    expect(nestedAfter["inner.txt"]).not.toBe(nestedBefore["inner.txt"]); // only the user's own write
    delete nestedAfter["inner.txt"];
    delete nestedBefore["inner.txt"];
    expect(nestedAfter).toEqual(nestedBefore);
    expect(read(ws, "experiments/nested/inner.txt")).toBe("inner v2");

    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");
    expect(shadowGit(gitDir, "log", "-1", "--format=%an <%ae>|%cn|%G?", base.id)).toBe(
      "Dline Checkpoint <checkpoint@dline.invalid>|Dline Checkpoint|N\n",
    );
    expect(shadowGit(gitDir, "config", "--get", "core.worktree").trim()).toBe(ws);
    expect(shadowGit(gitDir, "ls-tree", "-r", "--name-only", base.id)).not.toMatch(/nested|vendored|\.git\//);
    expect(shadowGit(gitDir, "show", "-s", "--format=%B", base.id)).toMatch(/Dline-Task: iso/);
    expect(fs.existsSync(marker)).toBe(false);
    // Checkpoint refs are per task.
    expect(
      shadowGit(gitDir, "for-each-ref", "--format=%(refname)", "refs/dline/tasks/iso/").trim().split("\n").length,
    ).toBeGreaterThanOrEqual(4);
  });

  it("refuses to reuse a shadow repository recorded for another folder", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "a");
    const first = makeManager(sb);
    expect(await first.ensureBaseline({ id: "t1", workspaceRoots: [sb.workspace] })).toBeDefined();
    const gitDir = path.join(sb.layout.checkpointRepoDir(sb.workspace), ".git");
    shadowGit(gitDir, "config", "core.worktree", path.join(sb.base, "elsewhere"));
    const second = makeManager(sb);
    expect(await second.ensureBaseline({ id: "t2", workspaceRoots: [sb.workspace] })).toBeUndefined();
    const status = await second.status({ workspaceRoot: sb.workspace });
    expect(status.state).toBe("failed");
    expect(status.message).toMatch(/belongs to another folder/);
    expect(shadowGit(gitDir, "config", "--get", "core.worktree").trim()).toBe(path.join(sb.base, "elsewhere"));
  });

  it("a later process knows its folder by the recorded work tree, whatever the folder's name; another folder written in our own quoting is refused too", async () => {
    const sb = makeSandbox();
    const ws = path.join(sb.home, 'odd "quoted" \\ back#slash; folder');
    write(ws, "a.txt", "a");
    const first = makeManager(sb);
    expect(await first.ensureBaseline({ id: "t1", workspaceRoots: [ws] })).toBeDefined();
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");
    expect(shadowGit(gitDir, "config", "--get", "core.worktree").trim()).toBe(ws);
    write(ws, "a.txt", "changed");
    const later = (await makeManager(sb).ensureBaseline({ id: "t2", workspaceRoots: [ws] }))!;
    expect(shadowGit(gitDir, "show", `${later.id}:a.txt`)).toBe("changed");

    // The config as we write it (quoted), naming a folder whose name only starts like this one.
    const config = path.join(gitDir, "config");
    const quoted = (p: string) => `"${p.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
    fs.writeFileSync(config, fs.readFileSync(config, "utf8").replace(quoted(ws), quoted(`${ws}-elsewhere`)));
    expect(shadowGit(gitDir, "config", "--get", "core.worktree").trim()).toBe(`${ws}-elsewhere`);
    const third = makeManager(sb);
    expect(await third.ensureBaseline({ id: "t3", workspaceRoots: [ws] })).toBeUndefined();
    expect((await third.status({ workspaceRoot: ws })).message).toMatch(/belongs to another folder/);
  });
});

describe("isolation from the workspace's own git config and attributes", () => {
  it("runs nothing the workspace names: hooks, fsmonitor, filters, textconv, external diff, pager; the environment's git variables are ignored", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    const marks = path.join(sb.base, "marks");
    fs.mkdirSync(marks);
    // A program that leaves a mark when anything runs it.
    const evil = path.join(sb.base, "evil.sh");
    fs.writeFileSync(evil, `#!/bin/sh\ntouch "${marks}/$(date +%s%N)"\ncat\n`);
    fs.chmodSync(evil, 0o755);
    write(ws, "src/a.txt", "a\n");
    write(ws, "src/b.dat", "b\n");
    git(ws, "init", "-q");
    for (const [key, value] of [
      ["core.hooksPath", path.join(sb.base, "hooks")],
      ["core.fsmonitor", evil],
      ["core.pager", evil],
      ["filter.evil.clean", evil],
      ["filter.evil.smudge", evil],
      ["filter.evil.required", "true"],
      ["diff.evil.textconv", evil],
      ["diff.external", evil],
      ["alias.status", `!${evil}`],
      ["include.path", path.join(sb.base, "included.cfg")],
    ] as const)
      git(ws, "config", key, value);
    fs.writeFileSync(path.join(sb.base, "included.cfg"), `[core]\n\tfsmonitor = ${evil}\n`);
    fs.mkdirSync(path.join(sb.base, "hooks"));
    for (const hook of [
      "pre-commit",
      "post-commit",
      "reference-transaction",
      "pre-auto-gc",
      "post-checkout",
      "post-index-change",
    ]) {
      fs.writeFileSync(path.join(sb.base, "hooks", hook), `#!/bin/sh\n"${evil}" </dev/null\n`);
      fs.chmodSync(path.join(sb.base, "hooks", hook), 0o755);
    }
    write(ws, ".gitattributes", "* filter=evil diff=evil\n");
    // Git variables of the environment the sidecar was started in point at the same programs.
    const manager = makeManager(sb, {
      env: {
        ...sb.env,
        GIT_EXTERNAL_DIFF: evil,
        GIT_PAGER: evil,
        PAGER: evil,
        GIT_CONFIG_PARAMETERS: `'core.fsmonitor'='${evil}'`,
        GIT_DIR: path.join(ws, ".git"),
      },
    });
    const task = { id: "t1", workspaceRoots: [ws] };
    const base = (await manager.ensureBaseline(task))!;
    await manager.beforeEdit(task, ["src/a.txt"]);
    write(ws, "src/a.txt", "changed\n");
    await manager.saveTurn(task, { editedPaths: ["src/a.txt"] });
    write(ws, "src/b.dat", "changed by a command\n");
    await manager.saveTurn(task, { commandRan: true });
    await manager.compare("t1", base.id);
    await manager.restore("t1", base.id, "files");
    await manager.saveCompletion(task, {});
    await manager.stop();
    expect(fs.readdirSync(marks)).toEqual([]);
    expect(read(ws, "src/a.txt")).toBe("a\n");
    // The trap works: the user's own git in the workspace runs the filter.
    git(ws, "add", "src/a.txt");
    expect(fs.readdirSync(marks).length).toBeGreaterThan(0);
  });
});
