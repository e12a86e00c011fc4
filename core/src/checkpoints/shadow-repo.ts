import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, type Dirent } from "node:fs";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { DlineError } from "../errors.js";
import { normaliseWorkspacePath, PRIVATE_DIR_MODE, corruptCopyPath, writeFileAtomicSync } from "../storage/index.js";
import { writeAttributesFile } from "./attributes-file.js";
import type { GitChildren } from "./git-children.js";
import { GitError, ShadowGit } from "./git-process.js";
import { mergeConfig, quoteConfigValue, quotedConfigValue } from "./shadow-config.js";

/**
 * Creates, opens and repairs the shadow repository of one workspace:
 * `<repoDir>/.git` with `core.worktree` = the project folder. Callers hold the repository lock.
 */
export interface ShadowRepoPaths {
  repoDir: string;
  gitDir: string;
  hooksDir: string;
  lockTarget: string;
  /** The packing lock's (packing-lock.ts). */
  packingLockTarget: string;
}

export function shadowRepoPaths(repoDir: string): ShadowRepoPaths {
  return {
    repoDir,
    gitDir: path.join(repoDir, ".git"),
    hooksDir: path.join(repoDir, "no-hooks"),
    lockTarget: path.join(repoDir, "repo"),
    packingLockTarget: path.join(repoDir, "packing"),
  };
}

/**
 * Settings of every shadow repository; written at creation and brought up to date on open.
 * The hooks path is an empty folder and fsmonitor is off, so no git process of ours runs a
 * program; automatic gc is off: packing runs outside the repository lock (maintenance.ts).
 */
const REPO_CONFIG: [string, string][] = [
  ["core.bare", "false"],
  // Every file git writes in the repository is 0600 and every folder 0700: the repository
  // holds copies of the workspace's files, for its user alone.
  ["core.sharedRepository", "0600"],
  ["core.logAllRefUpdates", "false"],
  ["core.untrackedCache", "true"],
  // Scans ask for every untracked file (--untracked-files=all); git uses the untracked cache
  // only when this setting asks for the same, otherwise each status reads every folder again.
  ["status.showUntrackedFiles", "all"],
  ["core.splitIndex", "true"],
  ["splitIndex.maxPercentChange", "50"],
  ["index.version", "4"],
  ["core.preloadIndex", "true"],
  ["core.checkStat", "minimal"],
  ["core.fsmonitor", "false"],
  ["core.pager", "cat"],
  ["commit.gpgSign", "false"],
  ["user.name", "Dline Checkpoint"],
  ["user.email", "checkpoint@dline.invalid"],
  ["gc.auto", "0"],
  ["gc.reflogExpire", "now"],
  ["gc.reflogExpireUnreachable", "now"],
  ["gc.pruneExpire", "now"],
  ["gc.autoDetach", "false"],
  ["maintenance.auto", "false"],
  ["protocol.allow", "never"],
  ["submodule.recurse", "false"],
  // Git's default global ignore and attributes files live outside the global config; the
  // user's global git setup must not shape snapshots either.
  ["core.excludesFile", "/dev/null"],
  ["core.attributesFile", "/dev/null"],
];

/** Files git leaves behind when it is killed mid-write; safe to remove while we hold the lock. */
const TOP_LEVEL_LOCKS = ["index.lock", "HEAD.lock", "packed-refs.lock", "config.lock", "shallow.lock"];

export class ShadowRepo {
  readonly paths: ShadowRepoPaths;
  readonly git: ShadowGit;

  constructor(
    readonly workspaceRoot: string,
    repoDir: string,
    baseEnv: NodeJS.ProcessEnv,
    children?: GitChildren,
  ) {
    this.paths = shadowRepoPaths(repoDir);
    this.git = new ShadowGit({
      gitDir: this.paths.gitDir,
      workTree: workspaceRoot,
      emptyHooksDir: this.paths.hooksDir,
      baseEnv,
      children,
    });
  }

  /** Asked before every locked step: a synchronous stat (microseconds, not a thread-pool round trip). */
  async exists(): Promise<boolean> {
    return existsSync(path.join(this.paths.gitDir, "HEAD"));
  }

  /**
   * Opens the repository, creating it when missing. Refuses one recorded for another folder
   * (hash collision or a moved checkpoints folder): that repository is not ours to write.
   * An existing one is read by git once (`rev-parse`), so that damage shows before anything
   * builds on it, unless `gitRunsNext`: the caller's next step is a git command that finds it
   * just as well (a scan), and a process start is spared. Returns true when it was created now.
   */
  async openOrCreate(signal?: AbortSignal, gitRunsNext = false): Promise<boolean> {
    // Synchronous up to the first git process (see readLfsPatterns): a few small files.
    mkdirSync(this.paths.hooksDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    // Top-level locks only: those under refs/ (a folder per task, walked in 2-15 ms, more with
    // every task) block nothing of ours; a git that meets one has them all removed and runs again
    // (RecoveringLock), and the walk runs after the process's first save (WorkspaceCheckpoints).
    await this.removeStaleLocks("none");
    if (existsSync(this.paths.gitDir)) {
      // The work tree as we wrote it, read without a git process; git is asked when it reads otherwise.
      const written = quotedConfigValue(readIfPresent(path.join(this.paths.gitDir, "config")), "core", "worktree");
      const recorded =
        written ?? (await this.git.text(["config", "--get", "core.worktree"], { okCodes: [1], signal })).trim();
      if (!recorded) {
        throw new GitError(
          "the shadow repository has no core.worktree",
          ["config"],
          "not a git repository (no core.worktree)",
          1,
        );
      }
      if (normaliseWorkspacePath(recorded) !== normaliseWorkspacePath(this.workspaceRoot)) {
        throw new DlineError(
          "failed_precondition",
          `The checkpoint repository ${this.paths.gitDir} belongs to another folder (${recorded}); it was left untouched.`,
        );
      }
      this.applySettings();
      if (!gitRunsNext) await this.git.command(["rev-parse", "--git-dir"], { signal });
      return false;
    }
    await fs.mkdir(this.paths.repoDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    await this.git.command(["init", "--quiet", "--shared=0600", `--initial-branch=dline-snapshots`], { signal });
    // Sample hooks from the template would never run (hooksPath), but they are noise on disk.
    await fs.rm(path.join(this.paths.gitDir, "hooks"), { recursive: true, force: true });
    this.applySettings();
    return true;
  }

  /**
   * Brings the config and `info/attributes` up to date: git init's keys merged with ours in one
   * write (a git process per key costs ~10 ms each on a busy machine). `git init` records the
   * work tree itself, resolved through symbolic links: ours replaces it, as given (the recorded
   * folder is compared with the workspace on every open). Synchronous: a few hundred bytes.
   */
  private applySettings(): void {
    const configFile = path.join(this.paths.gitDir, "config");
    const current = readFileSync(configFile, "utf8");
    const wanted = mergeConfig(current, [
      ["core.worktree", quoteConfigValue(this.workspaceRoot)],
      ["core.hooksPath", quoteConfigValue(this.paths.hooksDir)],
      ...REPO_CONFIG,
    ]);
    if (wanted !== current) {
      writeFileAtomicSync(configFile, wanted);
    }
    writeAttributesFile(this.paths.gitDir);
  }

  /**
   * Removes lock files a killed git left; only called while holding the repository lock, so no
   * git of ours is running. `refs` also clears ref folders (ref locks, our temporary ref files):
   * "all" walks refs/ (when git reported a lock), a list only those folders (refs/-relative: a
   * process's first save of a task clears the task's and the snapshot branch's, in a time that
   * does not grow with the number of tasks the repository holds).
   */
  /**
   * What a fast-import killed part-way (a restore's or a save's process killed) left in the
   * packs folder: the `.keep` it writes beside the pack it has just written (its text
   * "fast-import"), removed once it has moved its refs, with which the pack was never pruned;
   * and temporary pack files over an hour old (a repack outside the lock may be writing fresh
   * ones). Only fast-import under the repository lock, which the caller holds, writes such a
   * `.keep` here, so any found is stale. Answers the files removed (objects-relative).
   */
  removeStaleKeeps(): string[] {
    const packDir = path.join(this.paths.gitDir, "objects", "pack");
    let names: string[];
    try {
      names = readdirSync(packDir);
    } catch {
      return [];
    }
    const removed: string[] = [];
    const old = Date.now() - 60 * 60_000;
    for (const name of names) {
      const file = path.join(packDir, name);
      try {
        const stale = name.endsWith(".keep")
          ? readFileSync(file, "latin1").startsWith("fast-import")
          : name.startsWith("tmp_pack_") && lstatSync(file).mtimeMs < old;
        if (!stale) continue;
        rmSync(file, { force: true });
        removed.push(`pack/${name}`);
      } catch {
        // Gone meanwhile, or not ours to read.
      }
    }
    return removed;
  }

  async removeStaleLocks(refs: "none" | "all" | readonly string[] = "all"): Promise<string[]> {
    const removed: string[] = [];
    for (const name of TOP_LEVEL_LOCKS) {
      const file = path.join(this.paths.gitDir, name);
      // Checked before every locked step, usually finding nothing: synchronous calls.
      if (!existsSync(file)) continue;
      try {
        rmSync(file);
        removed.push(name);
      } catch {
        // Gone meanwhile.
      }
    }
    if (refs === "none") return removed;
    const refsDir = path.join(this.paths.gitDir, "refs");
    // Synchronous: a few folders, each a thread-pool round trip when asynchronous.
    const clear = (dir: string, deep: boolean): void => {
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) {
          if (deep) clear(p, deep);
        } else if (e.name.endsWith(".lock") || e.name.endsWith(".tmp")) {
          rmSync(p, { force: true });
          removed.push(path.relative(this.paths.gitDir, p));
        }
      }
    };
    if (refs === "all") clear(refsDir, true);
    else for (const folder of refs) clear(path.join(refsDir, ...folder.split("/")), false);
    return removed;
  }

  /**
   * Moves a damaged repository aside (`.git.corrupt-<time>`), never deleting it: it may still
   * hold checkpoints someone wants to recover by hand. Returns where it went.
   */
  async setAside(): Promise<string> {
    const aside = corruptCopyPath(this.paths.gitDir);
    await fs.rename(this.paths.gitDir, aside);
    return aside;
  }

  /** Bytes used by the repository's objects (the part the size budget governs), from git's own count. */
  async objectBytes(): Promise<number> {
    if (!(await this.exists())) return 0;
    const out = await this.git.text(["count-objects", "-v"]);
    const kib = (key: string) => Number(new RegExp(`^${key}: (\\d+)`, "m").exec(out)?.[1] ?? 0);
    return (kib("size") + kib("size-pack") + kib("size-garbage")) * 1024;
  }
}

function readIfPresent(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return "";
  }
}
