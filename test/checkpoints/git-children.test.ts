import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { GitChildren } from "../../core/src/checkpoints/git-children.js";
import { GitError, ShadowGit } from "../../core/src/checkpoints/git-process.js";
import { makeSandbox } from "./helpers.js";
import { nth } from "../helpers/items.js";
import { isRunning } from "../helpers/processes.js";

async function until(cond: () => boolean): Promise<boolean> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 25));
  return cond();
}

/** The fields of /proc/<pid>/stat after the command's name: state, ppid, pgrp, ... */
function statFields(pid: number | string): string[] {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  return nth(stat.split(") "), 1, `part after the command's name in /proc/${pid}/stat`).split(" ");
}

/** The pids of the processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  return fs
    .readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        return Number(statFields(n)[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe("the git processes of the checkpoints", () => {
  function shadowGit(children: GitChildren): ShadowGit {
    const sb = makeSandbox();
    const gitDir = path.join(sb.base, "shadow.git");
    fs.mkdirSync(gitDir);
    return new ShadowGit({ gitDir, workTree: sb.workspace, emptyHooksDir: sb.base, baseEnv: sb.env, children });
  }

  it("each runs in a process group of its own, stopped as a whole by the caller's abort", async () => {
    const children = new GitChildren();
    const git = shadowGit(children);
    await git.run(["init", "-q"]);
    const abort = new AbortController();
    // A git that waits on its input until it is stopped.
    const proc = git.spawn(["cat-file", "--batch"], { signal: abort.signal });
    expect(children.running).toBe(1);
    abort.abort();
    await expect(proc.exit).rejects.toBeInstanceOf(GitError);
    expect(children.running).toBe(0);
  });

  it("killAll (the sidecar stopping) ends every git still running, each a process group of its own", async () => {
    const children = new GitChildren();
    const git = shadowGit(children);
    await git.run(["init", "-q"]);
    // Two gits waiting on their input, as a scan or a save stuck on the workspace would.
    const first = git.spawn(["cat-file", "--batch"]);
    const second = git.spawn(["hash-object", "--stdin"]);
    first.exit.catch(() => undefined);
    second.exit.catch(() => undefined);
    expect(children.running).toBe(2);
    const pids = childrenOf(process.pid).filter((pid) => fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "git");
    expect(pids.length).toBeGreaterThanOrEqual(2);
    for (const pid of pids) expect(statFields(pid)[2]).toBe(String(pid));
    children.killAll();
    expect(await until(() => pids.every((pid) => !isRunning(pid)))).toBe(true);
    await Promise.allSettled([first.exit, second.exit]);
    expect(children.running).toBe(0);
  });

  // Linux with autogroups (most desktop distributions' kernels): each session is a scheduling
  // group weighed as one, so git, in a session of its own, took as much CPU as the whole editor
  // or terminal session of the sidecar, whatever the nice value of its threads.
  it.skipIf(!fs.existsSync("/proc/self/autogroup"))(
    "a background git runs at a lower priority in a scheduling group of its own, never lowering this process's",
    async () => {
      const children = new GitChildren();
      const git = shadowGit(children);
      await git.run(["init", "-q"]);
      const ownGroup = fs.readFileSync("/proc/self/autogroup", "utf8");
      const isGit = (pid: number) => {
        try {
          return fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "git";
        } catch {
          return false; // ended meanwhile
        }
      };
      const gitChild = () => childrenOf(process.pid).find(isGit);
      const groupOf = (pid: number) => fs.readFileSync(`/proc/${pid}/autogroup`, "utf8").trim();

      const background = git.spawn(["cat-file", "--batch"], { background: true });
      let pid: number | undefined;
      expect(await until(() => (pid = gitChild()) !== undefined)).toBe(true);
      // Its threads' nice value (field 19 of /proc/<pid>/stat) and its group's.
      expect(statFields(pid!)[16]).toBe("10");
      expect(await until(() => groupOf(pid!).endsWith(" nice 10"))).toBe(true);
      expect(groupOf(pid!)).not.toBe(ownGroup.trim());
      expect(fs.readFileSync("/proc/self/autogroup", "utf8")).toBe(ownGroup);
      background.stdin.end();
      await background.exit;

      // A git someone waits for keeps the priority it was started with (this process's).
      const foreground = git.spawn(["cat-file", "--batch"]);
      expect(await until(() => (pid = gitChild()) !== undefined)).toBe(true);
      expect(statFields(pid!)[16]).toBe(statFields(process.pid)[16]);
      expect(groupOf(pid!)).toMatch(/ nice 0$/);
      foreground.stdin.end();
      await foreground.exit;
    },
  );

  it("a failure names git's command, not the settings given before it", async () => {
    const git = shadowGit(new GitChildren());
    await git.run(["init", "-q"]);
    // Both ways a command runs: a process of its own (run) and one-shot (command, through simple-git).
    await expect(git.run(["-c", "core.fsync=index", "cat-file", "-e", "0".repeat(40)])).rejects.toThrow(
      /^git cat-file failed \(1\)/,
    );
    await expect(git.command(["-c", "pack.threads=1", "no-such-command"])).rejects.toThrow(
      /^git no-such-command failed/,
    );
  });
});
