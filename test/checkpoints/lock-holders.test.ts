// The repository lock between processes whose holder runs but is stopped (SIGSTOP, a loaded
// machine), and what a person sees while another window holds it.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { CheckpointStatus } from "../../core/src/checkpoints/index.js";
import { LockLostError, RepoLock } from "../../core/src/checkpoints/repo-lock.js";
import { buildDriver, holding, runDriver } from "./driver-process.js";
import { makeManager, makeSandbox, write, type Sandbox } from "./helpers.js";

beforeAll(buildDriver);

const STALE_MS = 2000;

function until(condition: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (!condition()) return;
      clearInterval(timer);
      resolve();
    }, 20);
  });
}

function repoPaths(sb: Sandbox) {
  const repoDir = sb.layout.checkpointRepoDir(sb.workspace);
  return {
    gitDir: path.join(repoDir, ".git"),
    lockDir: path.join(repoDir, "repo.lock"),
    target: path.join(repoDir, "repo"),
  };
}

/** Whether the lock folder has gone unrefreshed for `ms` (or is gone). */
function unrefreshedFor(lockDir: string, ms: number): boolean {
  try {
    return fs.statSync(lockDir).mtimeMs < Date.now() - ms;
  } catch {
    return true;
  }
}

function shadowGit(sb: Sandbox, ...args: string[]): string {
  return execFileSync("git", ["--git-dir", repoPaths(sb).gitDir, ...args], {
    env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    encoding: "utf8",
  });
}

describe("a stopped holder of the repository lock", () => {
  it("keeps it past the stale time, and its git's index.lock stays; once it is killed, the next goes on", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "one\n");
    const holder = runDriver(sb, "holder", 0, [], { holdLock: true, lockStaleMs: STALE_MS });
    await holding(holder);
    const { gitDir, lockDir } = repoPaths(sb);
    // What the holder's git holds while it writes the index.
    fs.writeFileSync(path.join(gitDir, "index.lock"), "");
    holder.child.kill("SIGSTOP");

    const manager = makeManager(sb, { lockStaleMs: STALE_MS });
    const task = { id: "next", workspaceRoots: [sb.workspace] };
    write(sb.workspace, "a.txt", "two\n");
    let settled = false;
    const baseline = manager.ensureBaseline(task).finally(() => (settled = true));
    // Until the lock has gone unrefreshed for three stale times (before, it was taken over after one).
    await until(() => settled || unrefreshedFor(lockDir, 3 * STALE_MS));
    expect(settled).toBe(false);
    expect(fs.existsSync(path.join(gitDir, "index.lock"))).toBe(true);

    holder.child.kill("SIGCONT");
    holder.child.kill("SIGKILL");
    await holder.done;
    const cp = (await baseline)!;
    expect(shadowGit(sb, "show", `${cp.id}:a.txt`)).toBe("two\n");
    expect(fs.existsSync(path.join(gitDir, "index.lock"))).toBe(false);
    await manager.stop();
  }, 60_000);

  it("is waited for up to the wait limit, then the checkpoints fail naming another window", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "one\n");
    const holder = runDriver(sb, "holder", 0, [], { holdLock: true, lockStaleMs: STALE_MS });
    await holding(holder);
    holder.child.kill("SIGSTOP");
    // A wait limit longer than the stale time: the holder is stopped, not gone.
    const manager = makeManager(sb, { lockStaleMs: STALE_MS, lockWaitMs: 3 * STALE_MS });
    const task = { id: "next", workspaceRoots: [sb.workspace] };
    expect(await manager.ensureBaseline(task)).toBeUndefined();
    const status = await manager.status({ workspaceRoot: sb.workspace });
    expect(status.state).toBe("failed");
    expect(status.message).toContain(
      `Another Dline window (process ${holder.child.pid}) has been using this workspace's checkpoints`,
    );
    holder.child.kill("SIGKILL");
    await holder.done;
    await manager.stop();
  }, 60_000);
});

describe("a holder whose lock was taken over", () => {
  it("does not go on: its step fails, and it no longer counts as holding the lock", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "one\n");
    const { lockDir, target } = repoPaths(sb);
    let noticed!: () => void;
    const lost = new Promise<void>((resolve) => (noticed = resolve));
    const lock = new RepoLock(target, STALE_MS, 120_000, () => noticed());
    let taker: ReturnType<typeof runDriver> | undefined;
    const step = lock.with(async () => {
      // Removed behind the holder's back (by hand, or a version that judged it by age): another
      // process takes the lock.
      fs.rmSync(lockDir, { recursive: true });
      taker = runDriver(sb, "taker", 0, [], { holdLock: true, lockStaleMs: STALE_MS });
      await holding(taker);
      await lost; // found at the holder's next refresh
      return "went on";
    });
    await expect(step).rejects.toBeInstanceOf(LockLostError);
    expect(lock.held()).toBe(false);
    taker?.child.kill("SIGKILL");
    await taker?.done;
  }, 60_000);
});

describe("waiting for another window's lock at start-up", () => {
  it("is shown as such and does not count against the initialization timeout", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "one\n");
    const holder = runDriver(sb, "holder", 0, [], { holdLock: true, lockStaleMs: STALE_MS });
    await holding(holder);
    const seen: CheckpointStatus[] = [];
    const initTimeoutMs = 1500;
    const manager = makeManager(sb, {
      lockStaleMs: STALE_MS,
      initTimeoutMs,
      slowInitMs: initTimeoutMs,
      onStatus: (_root, status) => seen.push(status),
    });
    const task = { id: "next", workspaceRoots: [sb.workspace] };
    let settled = false;
    const baseline = manager.ensureBaseline(task).finally(() => (settled = true));
    // Held past the initialization timeout.
    const since = Date.now();
    await until(() => settled || Date.now() - since > 2 * initTimeoutMs);
    holder.child.kill("SIGKILL");
    await holder.done;
    expect(await baseline).toBeDefined();
    expect(seen.map((s) => s.message)).toContain(
      `Checkpoints are waiting for another Dline window using this workspace's checkpoints (process ${holder.child.pid}).`,
    );
    expect(seen.filter((s) => s.state === "failed")).toEqual([]);
    expect((await manager.status({ workspaceRoot: sb.workspace })).state).toBe("ready");
    await manager.stop();
  }, 60_000);
});
