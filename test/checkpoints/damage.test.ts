import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { DlineError } from "../../core/src/errors.js";
import { GitError, ShadowGit } from "../../core/src/checkpoints/git-process.js";
import { makeManager, makeSandbox, read, write, type Sandbox } from "./helpers.js";
import { nth } from "../helpers/items.js";

function gitDirOf(sb: Sandbox): string {
  return path.join(sb.layout.checkpointRepoDir(sb.workspace), ".git");
}

function shadowGit(sb: Sandbox, ...args: string[]): string {
  return execFileSync("git", ["--git-dir", gitDirOf(sb), ...args], {
    env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    encoding: "utf8",
  });
}

/** Folders and files a recovery moved aside in the shadow repository's folder or its .git. */
function asideIn(dir: string): string[] {
  return fs.readdirSync(dir).filter((n) => n.includes(".corrupt-"));
}

/** A workspace with one finished task: a baseline, a turn after an edit, a turn after a command. */
async function oneTask(sb: Sandbox) {
  for (let i = 0; i < 300; i++) write(sb.workspace, `src/d${i % 10}/f${i}.txt`, `file ${i}\n`);
  const first = makeManager(sb);
  const task = { id: "t1", workspaceRoots: [sb.workspace] };
  const base = (await first.ensureBaseline(task))!;
  write(sb.workspace, "src/d1/f1.txt", "edited\n");
  const edit = (await first.saveTurn(task, { editedPaths: ["src/d1/f1.txt"] }))!;
  write(sb.workspace, "cmd.txt", "made by a command\n");
  const cmd = (await first.saveTurn(task, { commandRan: true }))!;
  await first.idle();
  await first.stop();
  return { task, base, edit, cmd };
}

/** The child process of this one whose command line holds `args` (Linux: /proc). */
function childRunning(args: string): number {
  for (const task of fs.readdirSync("/proc/self/task")) {
    const children = fs.readFileSync(`/proc/self/task/${task}/children`, "utf8").split(" ").filter(Boolean);
    for (const pid of children) {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(args)) return Number(pid);
    }
  }
  throw new Error(`no child runs ${args}`);
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (err) {
    return err instanceof DlineError ? err.code : `not a DlineError: ${(err as Error).message}`;
  }
}

describe("a damaged shadow index", () => {
  // A shared index cut to a fifth makes git 2.39 crash (SIGSEGV, nothing on stderr); cut in
  // half, it says "malformed name field" or "unknown index entry format".
  for (const mode of ["shared index cut to a fifth", "shared index cut in half", "index truncated"] as const) {
    it(`(${mode}) is moved aside and rebuilt: the next task saves, older tasks compare and restore`, async () => {
      const sb = makeSandbox();
      const { base } = await oneTask(sb);
      const gitDir = gitDirOf(sb);
      if (mode === "index truncated") fs.truncateSync(path.join(gitDir, "index"), 100);
      else {
        const shared = nth(
          fs.readdirSync(gitDir).filter((n) => n.startsWith("sharedindex.")),
          0,
          "shared index",
        );
        const file = path.join(gitDir, shared);
        fs.truncateSync(file, Math.floor(fs.statSync(file).size / (mode === "shared index cut in half" ? 2 : 5)));
      }
      if (mode === "shared index cut to a fifth") {
        const crashed = spawnSync("git", ["--git-dir", gitDir, "--work-tree", sb.workspace, "status"], {
          env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
        });
        expect(crashed.signal).toBe("SIGSEGV");
      }

      const next = makeManager(sb);
      const later = { id: "t2", workspaceRoots: [sb.workspace] };
      write(sb.workspace, "cmd.txt", "changed by the next task\n");
      expect(await next.ensureBaseline(later)).toBeDefined();
      const turn = await next.saveTurn(later, { commandRan: true });
      expect(turn).toBeDefined();
      const status = await next.status({ workspaceRoot: sb.workspace });
      expect(status.state).toBe("ready");
      expect(status.message).toMatch(/index was damaged and has been rebuilt/);
      // The damaged files were kept aside, not deleted.
      const aside = asideIn(gitDir);
      expect(aside.length).toBe(1);
      expect(fs.readdirSync(path.join(gitDir, aside[0]!)).length).toBeGreaterThan(0);

      // The older task's checkpoints still work.
      const compared = await next.compare("t1", base.id);
      expect(compared.files.map((f) => f.path).sort()).toEqual(["cmd.txt", "src/d1/f1.txt"]);
      const restored = await next.restore("t1", base.id, "files");
      expect(restored.fileError).toBe("");
      expect(read(sb.workspace, "src/d1/f1.txt")).toBe("file 1\n");
      expect(shadowGit(sb, "fsck", "--no-dangling", "--no-progress")).toBe("");
      await next.stop();
    });
  }
});

describe("a git a signal ended", () => {
  it("fails with an error naming the signal (a crash prints nothing on stderr)", async () => {
    const sb = makeSandbox();
    const gitDir = path.join(sb.base, "repo.git");
    execFileSync("git", ["init", "-q", "--bare", gitDir]);
    const git = new ShadowGit({ gitDir, workTree: sb.workspace, emptyHooksDir: sb.base, baseEnv: sb.env });
    const proc = git.spawn(["cat-file", "--batch"]);
    // Waiting on its stdin until it is killed.
    const pid = childRunning("cat-file\0--batch");
    process.kill(pid, "SIGSEGV");
    const err = await proc.exit.then(
      () => undefined,
      (e: unknown) => e,
    );
    proc.stdin.destroy();
    expect(err).toBeInstanceOf(GitError);
    expect((err as GitError).killedBy).toBe("SIGSEGV");
    expect((err as GitError).message).toBe("git cat-file was killed by SIGSEGV");
  });
});

describe("a damaged HEAD of the shadow repository", () => {
  it("is repaired by a plain listing, which never sets the repository aside", async () => {
    const sb = makeSandbox();
    const { edit, cmd } = await oneTask(sb);
    const gitDir = gitDirOf(sb);
    fs.writeFileSync(path.join(gitDir, "HEAD"), "garbage\n");

    const next = makeManager(sb);
    const ids = (await next.list("t1")).map((c) => c.id);
    expect(ids.length).toBe(3);
    expect(ids).toContain(edit.id);
    expect(asideIn(sb.layout.checkpointRepoDir(sb.workspace))).toEqual([]);
    expect(fs.readFileSync(path.join(gitDir, "HEAD"), "utf8")).toBe("ref: refs/heads/dline-snapshots\n");
    // What it held is kept aside.
    const kept = asideIn(gitDir).filter((n) => n.startsWith("HEAD."));
    expect(kept.length).toBe(1);
    expect(fs.readFileSync(path.join(gitDir, kept[0]!), "utf8")).toBe("garbage\n");
    expect(shadowGit(sb, "rev-parse", "HEAD").trim()).toBe(cmd.id);
    const status = await next.status({ workspaceRoot: sb.workspace });
    expect(status.message).toMatch(/HEAD was damaged and has been repaired/);
    await next.stop();
  });

  it("a listing of a repository git cannot read says so with data_loss and leaves it where it is", async () => {
    const sb = makeSandbox();
    await oneTask(sb);
    const gitDir = gitDirOf(sb);
    // Damage no repair undoes: the object store is gone (git then sees no repository at all).
    fs.rmSync(path.join(gitDir, "objects"), { recursive: true });

    const next = makeManager(sb);
    await expect(next.list("t1")).rejects.toMatchObject({ code: "data_loss", message: /is damaged .*left as it is/ });
    expect(asideIn(sb.layout.checkpointRepoDir(sb.workspace))).toEqual([]);
    await next.stop();
  });
});

describe("a checkpoint whose objects are missing", () => {
  it("is left out of the listing; compare and restore of it fail with data_loss naming it; the others work", async () => {
    const sb = makeSandbox();
    const { base, edit } = await oneTask(sb);
    // The edit turn's commit object is lost (a pack or loose file removed).
    const gitDir = gitDirOf(sb);
    const loose = path.join(gitDir, "objects", edit.id.slice(0, 2), edit.id.slice(2));
    if (fs.existsSync(loose)) fs.rmSync(loose);
    else {
      const packDir = path.join(gitDir, "objects", "pack");
      for (const idx of fs.readdirSync(packDir).filter((n) => n.endsWith(".idx"))) {
        const listed = execFileSync("git", ["verify-pack", "-v", path.join(packDir, idx)], { encoding: "utf8" });
        if (!listed.split("\n").some((l) => l.startsWith(edit.id))) continue;
        fs.rmSync(path.join(packDir, idx));
        fs.rmSync(path.join(packDir, idx.replace(/\.idx$/, ".pack")));
      }
    }
    expect(() => shadowGit(sb, "cat-file", "-e", edit.id)).toThrow();

    const next = makeManager(sb);
    const ids = (await next.list("t1")).map((c) => c.id);
    expect(ids).toContain(base.id);
    expect(ids).not.toContain(edit.id);
    for (const attempt of [next.compare("t1", edit.id), next.restore("t1", edit.id, "files")]) {
      const err = await attempt.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DlineError);
      expect((err as DlineError).code).toBe("data_loss");
      expect((err as DlineError).message).toContain(edit.id.slice(0, 8));
    }
    expect(await codeOf(next.compare("t1", base.id))).toBe("ok");
    const restored = await next.restore("t1", base.id, "files");
    expect(restored.fileError).toBe("");
    expect(read(sb.workspace, "src/d1/f1.txt")).toBe("file 1\n");
    expect(asideIn(sb.layout.checkpointRepoDir(sb.workspace))).toEqual([]);
    await next.stop();
  });
});
