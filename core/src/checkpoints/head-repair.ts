import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { corruptCopyPath, PRIVATE_FILE_MODE } from "../storage/index.js";
import { ALL_TASK_REFS, SNAPSHOT_HEAD } from "./checkpoint-record.js";
import type { ShadowGit } from "./git-process.js";
import { refsWithMissingCommits } from "./missing-objects.js";
import { compareNames } from "../text/name-order.js";

/** HEAD as every shadow repository has it: the snapshot branch (checkpoints are read from their own refs). */
const OUR_HEAD = `ref: ${SNAPSHOT_HEAD}\n`;

/** What git accepts as HEAD: a symbolic ref, or a commit id (detached). */
const READABLE_HEAD = /^(ref: refs\/\S+|[0-9a-f]{40}|[0-9a-f]{64})\n?$/;

/**
 * Puts back a HEAD git cannot read (git then takes the whole folder for "not a git repository"):
 * HEAD is ours, it only ever names the snapshot branch. What it held is kept aside
 * (`HEAD.corrupt-<time>`). Callers hold the repository lock. Returns where the damaged HEAD
 * went ("" when there was none), or undefined when HEAD was readable and nothing was done.
 */
export function repairHead(gitDir: string): string | undefined {
  if (!existsSync(gitDir)) return undefined;
  const head = path.join(gitDir, "HEAD");
  let content: string | undefined;
  try {
    content = readFileSync(head, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") return undefined;
  }
  if (content !== undefined && READABLE_HEAD.test(content)) return undefined;
  let kept = "";
  if (content !== undefined) {
    kept = corruptCopyPath(head);
    renameSync(head, kept);
  }
  writeFileSync(head, OUR_HEAD, { mode: PRIVATE_FILE_MODE });
  return kept;
}

/** git's answer when the commit HEAD names is missing or unreadable. */
const HEAD_COMMIT_GONE = /bad object HEAD\b|bad revision 'HEAD'/i;

/**
 * After git said HEAD's commit is gone (`stderr`): points the snapshot branch at the newest
 * checkpoint whose commit is there, or leaves it unborn when there is none. HEAD only serves as
 * the base `git status` compares the index with; the checkpoints are their own refs. Returns
 * the commit the branch named, or undefined when git's message was about something else.
 */
export async function repairSnapshotBranch(git: ShadowGit, stderr: string): Promise<string | undefined> {
  if (!HEAD_COMMIT_GONE.test(stderr)) return undefined;
  const gitDir = git.options.gitDir;
  const branch = path.join(gitDir, ...SNAPSHOT_HEAD.split("/"));
  const named = (readOr(branch) ?? "").trim();
  const refs = (await git.text(["for-each-ref", "--format=%(objectname) %(refname)", ALL_TASK_REFS]))
    .split("\n")
    .filter(Boolean)
    .map((line) => [line.slice(0, line.indexOf(" ")), line.slice(line.indexOf(" ") + 1)] as const);
  const missing = await refsWithMissingCommits(git, refs, undefined);
  // A checkpoint ref's last part is its time (then a tie-breaker): the largest is the newest.
  const newest = refs
    .filter(([, ref]) => !missing.has(ref))
    .sort(([, a], [, b]) => compareNames(lastPart(b), lastPart(a)))[0];
  if (newest) {
    writeFileSync(`${branch}.tmp`, `${newest[0]}\n`, { mode: PRIVATE_FILE_MODE });
    renameSync(`${branch}.tmp`, branch);
  } else {
    // No checkpoint left to stand on: the next scan starts from an unborn branch.
    renameSync(branch, corruptCopyPath(branch));
  }
  return named;
}

function lastPart(ref: string): string {
  return ref.slice(ref.lastIndexOf("/") + 1);
}

function readOr(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
