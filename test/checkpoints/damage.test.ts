import * as fs from "node:fs";
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { GitError, ShadowGit } from "../../core/src/checkpoints/git-process.js";
import { makeSandbox } from "./helpers.js";

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
