import { createHash } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { FastImportSession, type TreeEntry } from "./fast-import-session.js";
import type { ShadowGit } from "./git-process.js";
import { BeyondLinkDetector, lstatIfPresent, mapLimit, toAbsolute } from "./workspace-paths.js";

/**
 * What fast commits need: the changes of recorded paths read from the work tree, whether they
 * change a tree, and fast-import sessions. A fast commit is "the previous snapshot plus these
 * paths" without reading or writing the 20,000- or 100,000-entry index: the cost follows the
 * number of paths, not the size of the tree. The index then lags the snapshot for those paths;
 * the next scan compares HEAD, index and work tree and restages them (SnapshotStager.stageScan).
 */
export interface PathChange {
  path: string;
  /** "delete" removes the path from the snapshot. */
  mode: "100644" | "100755" | "120000" | "delete";
  /** File content, or the link target for 120000. */
  content?: Buffer;
}

export type TreeEntries = Map<string, TreeEntry>;
type Change = PathChange | { path: string; mode: string; id: string };

/** Whether applying `changes` to a tree with `base` entries changes anything. */
export function changesTree(base: TreeEntries, changes: Change[]): boolean {
  return changes.some((c) => {
    const before = base.get(c.path);
    if (c.mode === "delete") return before !== undefined;
    const id = "id" in c ? c.id : blobId(c.content ?? Buffer.alloc(0));
    return !before || before.id !== id || before.mode !== c.mode;
  });
}

/**
 * A turn records a few paths, mostly small files: those are read with synchronous calls
 * (microseconds each, where each asynchronous one is a thread-pool round trip). Long lists and
 * large files are read asynchronously, so the event loop is not held up.
 */
export const FEW_PATHS = 64;
const SMALL_FILE = 256 * 1024;

/** How many files a long list reads at once: each read holds a file descriptor. */
const READS_AT_ONCE = 16;

/**
 * Reads what changed for each path from the work tree (missing, unreadable, or beyond a link
 * standing for a folder -> delete). Any other failure (out of file descriptors, an I/O error)
 * fails the save: recorded as a deletion, it made a restore's undo checkpoint lose files (all
 * 5,000 paths were read at once, and those past the process's file limit went).
 */
export async function readPathChanges(workspaceRoot: string, paths: string[]): Promise<PathChange[]> {
  const sync = paths.length <= FEW_PATHS;
  const links = new BeyondLinkDetector(workspaceRoot);
  return mapLimit(paths, READS_AT_ONCE, async (p): Promise<PathChange> => {
    if (links.beyondLink(p)) return { path: p, mode: "delete" };
    const abs = toAbsolute(workspaceRoot, p);
    const st = sync ? lstatIfPresent(abs) : await fs.lstat(abs).catch(goneOr(undefined));
    // Only files and links are snapshotted: reading a named pipe (FIFO) would wait forever.
    if (!st || !(st.isFile() || st.isSymbolicLink())) return { path: p, mode: "delete" };
    if (st.isSymbolicLink())
      return { path: p, mode: "120000", content: Buffer.from(sync ? readlinkSync(abs) : await fs.readlink(abs)) };
    const content = await (sync && st.size <= SMALL_FILE ? readSmall(abs) : fs.readFile(abs).catch(goneOr(undefined)));
    if (!content) return { path: p, mode: "delete" };
    return { path: p, mode: st.mode & 0o111 ? "100755" : "100644", content };
  });
}

/** Errors that say the file is not there to read (or not readable by anyone here): those only. */
const GONE = new Set(["ENOENT", "ENOTDIR", "EACCES", "EPERM", "ELOOP", "EISDIR"]);

function goneOr<T>(value: T): (err: unknown) => T {
  return (err) => {
    if (GONE.has((err as NodeJS.ErrnoException).code ?? "")) return value;
    throw err;
  };
}

async function readSmall(file: string): Promise<Buffer | undefined> {
  try {
    return readFileSync(file);
  } catch (err) {
    return goneOr(undefined)(err);
  }
}

function blobId(content: Buffer): string {
  return createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
}

export class FastCommitter {
  private usableAnswer: Promise<boolean> | undefined;

  constructor(
    private readonly git: ShadowGit,
    private readonly gitDir: string,
  ) {}

  /** True when this repository can take fast commits (files ref store, SHA-1 objects); asked once. */
  usable(): Promise<boolean> {
    return (this.usableAnswer ??= (async () => {
      const reftable = await fs.stat(path.join(this.gitDir, "reftable")).then(
        () => true,
        () => false,
      );
      const config = await fs.readFile(path.join(this.gitDir, "config"), "utf8").catch(() => "");
      return !reftable && !/objectformat\s*=\s*sha256/i.test(config);
    })());
  }

  /** A fast-import process for this repository (see FastImportSession). */
  open(options: { signal?: AbortSignal; keepPacks?: boolean } = {}): FastImportSession {
    return FastImportSession.open(this.git, options);
  }
}

/** Mode and blob id of each path in `dataref` (absent paths and folders are missing from the map). */
export async function sessionEntries(
  session: FastImportSession,
  dataref: string,
  paths: readonly string[],
): Promise<TreeEntries> {
  const answers = await Promise.all(paths.map((p) => session.ls(dataref, p)));
  const result: TreeEntries = new Map();
  paths.forEach((p, i) => {
    const e = answers[i];
    if (e) result.set(p, e);
  });
  return result;
}
