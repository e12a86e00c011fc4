import { mkdirSync, readdirSync, renameSync } from "node:fs";
import * as path from "node:path";
import { corruptCopyPath, PRIVATE_DIR_MODE } from "../storage/index.js";
import { subcommandOf, type GitError } from "./git-process.js";

/** What git prints when the index (or the shared index of a split one) cannot be read or is inconsistent. */
const INDEX_MESSAGES = [
  /index file corrupt/i,
  /bad signature 0x/i,
  /bad index file/i,
  /bad index version/i,
  /index file smaller than expected/i,
  /index uses .* extension, which we do not understand/i,
  /broken index, expect/i,
  /cache entry has null sha1/i,
  /unknown index entry format/i,
  /malformed name field in the index/i,
  /sharedindex/i,
  /corrupted link extension/i,
];

/** Subcommands that read the index: a crash of one of them is taken for a damaged index. */
const INDEX_READERS = new Set([
  "status",
  "update-index",
  "ls-files",
  "diff-index",
  "diff-files",
  "write-tree",
  "read-tree",
  "checkout-index",
]);

/**
 * Signals of a git that crashed, not of one something stopped (SIGKILL, SIGTERM: an OOM killer,
 * a user, our own stop). "a signal": the runner could not tell which (simple-git).
 */
const CRASH_SIGNALS = new Set(["SIGSEGV", "SIGBUS", "SIGABRT", "SIGILL", "SIGFPE", "a signal"]);

/**
 * True when a git failure points at the index: git said so, or a command that reads it crashed
 * (a truncated shared index makes git 2.39 segfault with no message). A wrong guess costs one
 * rescan of the workspace: the index is a cache, the snapshots are the commits.
 */
export function pointsAtIndex(err: GitError): boolean {
  if (INDEX_MESSAGES.some((re) => re.test(err.stderr))) return true;
  return !!err.killedBy && CRASH_SIGNALS.has(err.killedBy) && INDEX_READERS.has(subcommandOf(err.args) ?? "");
}

/**
 * Moves the index and its shared index files into one folder aside (`index.corrupt-<time>` in
 * the git folder; damaged files are kept, never deleted); the next scan builds a new index.
 * Callers hold the repository lock. Returns the folder.
 */
export function moveIndexAside(gitDir: string): string {
  const aside = corruptCopyPath(path.join(gitDir, "index"));
  mkdirSync(aside, { mode: PRIVATE_DIR_MODE });
  for (const name of readdirSync(gitDir)) {
    if (name !== "index" && !name.startsWith("sharedindex.")) continue;
    try {
      renameSync(path.join(gitDir, name), path.join(aside, name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
  return aside;
}
