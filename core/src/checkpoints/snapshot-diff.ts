import { isUtf8 } from "node:buffer";
import * as fs from "node:fs/promises";
import { GitError, splitNul, type ShadowGit } from "./git-process.js";
import { objectId } from "./git-objects.js";
import { gitPermissions, MAX_RECORDED_MODES, permissionsText, recordedMode, type ModeRecord } from "./file-modes.js";
import { BeyondLinkDetector, lstatIfPresent, mapLimit, toAbsolute } from "./workspace-paths.js";

export type FileStatus = "added" | "modified" | "deleted";

/** One changed file, as Compare and View Changes show it. */
export interface FileChange {
  path: string;
  status: FileStatus;
  before: string;
  after: string;
  binary: boolean;
  /** One side is over the size limit: its text is left out. */
  tooLarge: boolean;
  /** The file existed before, but checkpoints left it out: its earlier content is unknown. */
  notTracked?: boolean;
  /** The file existed before, and was too large to keep when the task changed it: a restore leaves it. */
  tooLargeToKeep?: boolean;
  /**
   * Its permissions changed (octal text: "600" then "644"): a file's bits where the checkpoint
   * recorded them (a private file: file-modes.ts), else git's 644 or 755 (its executable bit).
   * Both set or neither; a permission change alone is listed as modified with the same text.
   */
  modeBefore?: string;
  modeAfter?: string;
  /**
   * Its bits now are more open than the checkpoint recorded: a file restore narrows them back
   * whatever files it restores (file-modes.ts narrowToRecorded). Not part of the protocol.
   */
  opensRecordedBits?: boolean;
  /**
   * The git blob id of the "after" side (the file on disk, or in the later checkpoint), when it
   * was read: tells an "added" file whose pre-image is the same content (not a change at all).
   * Not part of the protocol.
   */
  afterBlob?: string;
}

interface RawEntry {
  path: string;
  status: FileStatus;
  oldBlob: string;
  newBlob: string;
  /** Git's modes ("100644", "120000"; "000000" for a side without the path). */
  oldMode: string;
  newMode: string;
}

const ZERO = /^0+$/;

/** Parses `git diff-* -z --raw --no-abbrev` output. */
function parseRaw(out: string): RawEntry[] {
  const fields = splitNul(out);
  const entries: RawEntry[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    // ":<old mode> <new mode> <old id> <new id> <letter>", then the path (both inside the loop's bound).
    const [oldMode = "", newMode = "", oldBlob, newBlob, letter] = fields[i]!.split(/\s+/);
    const p = fields[i + 1]!;
    if (oldBlob === undefined || newBlob === undefined)
      throw new GitError("unexpected output of git diff", ["diff"], `${fields[i]} ${p}`, 1);
    const status: FileStatus = letter === "A" ? "added" : letter === "D" ? "deleted" : "modified";
    entries.push({
      path: p,
      status,
      oldBlob: ZERO.test(oldBlob) ? "" : oldBlob,
      newBlob: ZERO.test(newBlob) ? "" : newBlob,
      oldMode: oldMode.replace(/^:/, ""),
      newMode,
    });
  }
  return entries;
}

/** `ls-tree -r -z` output: each file's mode, blob id and path. */
function parseLsTree(out: string): { mode: string; blob: string; path: string }[] {
  return splitNul(out).flatMap((line) => {
    const m = /^(\d+) blob ([0-9a-f]+)\t(.*)$/s.exec(line);
    return m ? [{ mode: m[1]!, blob: m[2]!, path: m[3]! }] : [];
  });
}

/** Permission bits then and now, when both are known and differ (FileChange.modeBefore). */
function modeChange(
  before: number | undefined,
  after: number | undefined,
): Pick<FileChange, "modeBefore" | "modeAfter"> {
  return before === undefined || after === undefined || before === after
    ? {}
    : { modeBefore: permissionsText(before), modeAfter: permissionsText(after) };
}

/** Recorded bits against a file's bits now; whether a restore narrows them (FileChange.opensRecordedBits). */
function recordedChange(
  then: number | undefined,
  now: number | undefined,
): Pick<FileChange, "modeBefore" | "modeAfter" | "opensRecordedBits"> {
  const modes = modeChange(then, now);
  return modes.modeBefore !== undefined && (now! & ~then!) !== 0 ? { ...modes, opensRecordedBits: true } : modes;
}

/** Contents of blobs by id, through one `cat-file --batch` (blobs over the limit are not read). */
async function readBlobs(git: ShadowGit, ids: string[], limit: number): Promise<Map<string, Buffer | "too_large">> {
  const result = new Map<string, Buffer | "too_large">();
  const unique = [...new Set(ids.filter(Boolean))];
  if (!unique.length) return result;
  const sizes = (await git.text(["cat-file", "--batch-check"], { input: unique.join("\n") + "\n" })).split("\n");
  const small: string[] = [];
  unique.forEach((id, i) => {
    const size = Number(sizes[i]?.split(" ")[2] ?? 0);
    if (size > limit) result.set(id, "too_large");
    else small.push(id);
  });
  if (!small.length) return result;
  const out = (await git.run(["cat-file", "--batch"], { input: small.join("\n") + "\n" })).stdout;
  let pos = 0;
  while (pos < out.length) {
    const nl = out.indexOf(10, pos);
    const [id = "", , sizeText] = out.subarray(pos, nl).toString("latin1").split(" ");
    const size = Number(sizeText);
    result.set(id, out.subarray(nl + 1, nl + 1 + size));
    pos = nl + 1 + size + 1;
  }
  return result;
}

/** Sizes of blobs by id, through one `cat-file --batch-check`; missing ones are left out. */
async function blobSizes(git: ShadowGit, ids: string[]): Promise<Map<string, number>> {
  const result = new Map<string, number>();
  const unique = [...new Set(ids)];
  if (!unique.length) return result;
  const lines = (await git.text(["cat-file", "--batch-check"], { input: unique.join("\n") + "\n" })).split("\n");
  unique.forEach((id, i) => {
    const [, type, size] = lines[i]?.split(" ") ?? [];
    if (type === "blob") result.set(id, Number(size));
  });
  return result;
}

export function isBinary(buf: Buffer): boolean {
  return buf.subarray(0, 8000).includes(0);
}

/**
 * A side's text. Bytes that are not UTF-8 (a Latin-1 or Shift-JIS file) are shown one character
 * per byte, as Latin-1: decoded as UTF-8 each such byte became U+FFFD, so "café" changed to
 * "cafè" showed the same on both sides, and the change could not be seen.
 */
export function shownText(buf: Buffer): string {
  return isUtf8(buf) ? buf.toString("utf8") : buf.toString("latin1");
}

/** Text of all files of one answer together; past it, files are listed without their text. */
const MAX_TOTAL_TEXT = 16 * 1024 * 1024;

/** Drops texts once the running total passes the cap (marked too large, never silently cut). */
function capTotal(changes: FileChange[]): FileChange[] {
  let total = 0;
  return changes.map((c) => {
    total += c.before.length + c.after.length;
    return total > MAX_TOTAL_TEXT ? { ...c, before: "", after: "", tooLarge: true } : c;
  });
}

/**
 * A file as a capture tells it: `blob` (its content), `created` (it was not there), or neither
 * (it was there, too large to keep).
 */
export interface PreimageSide {
  blob?: string;
  created?: boolean;
}

export interface PreimageEntry {
  path: string;
  /** What it was before the task's tool first changed it. */
  before: PreimageSide;
  /** What it was at a later checkpoint (a capture taken after it); absent: the workspace's file now. */
  later?: PreimageSide;
}

export class SnapshotDiff {
  constructor(
    private readonly git: ShadowGit,
    private readonly workspaceRoot: string,
    private readonly sizeLimitBytes: number,
  ) {}

  /**
   * A checkpoint against the index, which the caller just brought up to date with the workspace;
   * "after" is read from disk. `recorded`: the bits the checkpoint recorded (CheckpointMeta.modes),
   * whose files are listed when their bits differ now, their content the same or not.
   */
  async againstWorkspace(commit: string, recorded?: ModeRecord): Promise<FileChange[]> {
    const raw = parseRaw(
      await this.git.text(["diff-index", "--cached", "-z", "--raw", "--no-renames", "--no-abbrev", commit]),
    );
    const blobs = await readBlobs(
      this.git,
      raw.map((e) => e.oldBlob),
      this.sizeLimitBytes,
    );
    const links = new BeyondLinkDetector(this.workspaceRoot);
    const changes = await mapLimit(raw, 16, async (e) => {
      const now = await this.workspaceContent(e.path, links);
      // Gone from the scan but not from the workspace (grown past the size limit, say): modified.
      const entry: RawEntry = e.status === "deleted" && now !== undefined ? { ...e, status: "modified" } : e;
      const after = entry.status === "deleted" ? undefined : (now ?? Buffer.alloc(0));
      const change = this.change(entry, e.oldBlob ? blobs.get(e.oldBlob) : undefined, after);
      const modes = entry.status === "modified" ? this.modesAgainstWorkspace(entry, recorded, links) : {};
      return after instanceof Buffer
        ? { ...change, ...modes, afterBlob: objectId("blob", after) }
        : { ...change, ...modes };
    });
    const listed = new Set(raw.map((e) => e.path));
    return capTotal([...changes, ...(await this.recordedBitsChanged(recorded, listed, links))]);
  }

  /**
   * A modified file's permissions then and now: those recorded then against its bits now, or
   * git's executable bit on both sides (a file not recorded then may have had any bits that
   * include 644's: comparing them with its bits now would list files whose bits never changed).
   */
  private modesAgainstWorkspace(
    e: RawEntry,
    recorded: ModeRecord | undefined,
    links: BeyondLinkDetector,
  ): Pick<FileChange, "modeBefore" | "modeAfter" | "opensRecordedBits"> {
    const then = recordedMode(recorded, e.path);
    if (then === undefined) return modeChange(gitPermissions(e.oldMode), gitPermissions(e.newMode));
    return recordedChange(then, this.bitsNow(e.path, links));
  }

  /**
   * The files the checkpoint recorded bits of that git lists no change of, whose bits differ now
   * (a command's `chmod 644` of a private key): listed as modified, the same text on both sides.
   */
  private async recordedBitsChanged(
    recorded: ModeRecord | undefined,
    listed: ReadonlySet<string>,
    links: BeyondLinkDetector,
  ): Promise<FileChange[]> {
    const changed = Object.keys(recorded ?? {})
      .filter((p) => !listed.has(p) && !p.split("/").some((seg) => seg === "" || seg === "." || seg === ".."))
      .flatMap((p) => {
        const modes = recordedChange(recordedMode(recorded, p), this.bitsNow(p, links));
        return modes.modeBefore === undefined ? [] : [{ path: p, modes }];
      });
    return mapLimit(changed, 16, async ({ path: p, modes }) => {
      const content = await this.workspaceContent(p, links);
      return { ...this.change({ path: p, status: "modified" }, content, content), ...modes };
    });
  }

  /** A workspace file's permission bits now; undefined when it is not a file (or is beyond a link). */
  private bitsNow(repoPath: string, links: BeyondLinkDetector): number | undefined {
    if (links.beyondLink(repoPath)) return undefined;
    try {
      const st = lstatIfPresent(toAbsolute(this.workspaceRoot, repoPath));
      return st?.isFile() ? st.mode & 0o777 : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Files the snapshots leave out (inside a nested repository, say) against what they were
   * before a tool first changed them (PreimageSide), and what they are at a later checkpoint
   * (`later`, when a capture taken after it says) or now in the workspace. Those whose content
   * is the same on both sides are not listed.
   */
  async againstPreimages(entries: PreimageEntry[]): Promise<FileChange[]> {
    const sides = entries.flatMap((e) => (e.later ? [e.before, e.later] : [e.before]));
    const blobs = await readBlobs(
      this.git,
      sides.flatMap((side) => (side.blob ? [side.blob] : [])),
      this.sizeLimitBytes,
    );
    const sizes = await blobSizes(
      this.git,
      sides.flatMap((side) => (side.blob && blobs.get(side.blob) === "too_large" ? [side.blob] : [])),
    );
    const content = (side: PreimageSide) =>
      side.created ? undefined : side.blob ? blobs.get(side.blob) : ("too_large" as const);
    const changes = await mapLimit(entries, 16, async (e) => {
      const before = content(e.before);
      const after = e.later ? content(e.later) : await this.workspaceContent(e.path);
      if (before === undefined && after === undefined) return undefined;
      if (before instanceof Buffer && after instanceof Buffer && before.equals(after)) return undefined;
      // Both over the limit: the same content is told by the blob id (a restore wrote it back).
      const blob = e.before.blob;
      if (blob && before === "too_large" && after === "too_large") {
        if (e.later ? e.later.blob === blob : await this.holds(e.path, blob, sizes)) return undefined;
      }
      const status: FileStatus = before === undefined ? "added" : after === undefined ? "deleted" : "modified";
      return this.change({ path: e.path, status }, before, after);
    });
    return changes.filter((c): c is FileChange => c !== undefined);
  }

  /**
   * Whether the workspace file at `repoPath` is the blob `id` (whose size, when known, spares
   * reading a file of another size). Files only: a link's target is never over the limit.
   */
  private async holds(repoPath: string, id: string, sizes: ReadonlyMap<string, number>): Promise<boolean> {
    const file = toAbsolute(this.workspaceRoot, repoPath);
    const st = await fs.lstat(file).catch(() => undefined);
    if (!st?.isFile() || (sizes.has(id) && sizes.get(id) !== st.size)) return false;
    const content = await fs.readFile(file).catch(() => undefined);
    return !!content && objectId("blob", content) === id;
  }

  /** A workspace file's bytes (a link's target), "too_large", or undefined when it is not there. */
  private async workspaceContent(
    repoPath: string,
    links = new BeyondLinkDetector(this.workspaceRoot),
  ): Promise<Buffer | "too_large" | undefined> {
    // Beyond a link standing for a folder, it is not the workspace's file (maybe one outside).
    if (links.beyondLink(repoPath)) return undefined;
    const file = toAbsolute(this.workspaceRoot, repoPath);
    const st = await fs.lstat(file).catch(() => undefined);
    if (!st || st.isDirectory()) return undefined;
    if (st.size > this.sizeLimitBytes) return "too_large";
    if (st.isSymbolicLink()) return Buffer.from(await fs.readlink(file));
    // A named pipe would hold a thread for good: only files are read.
    return st.isFile() ? await fs.readFile(file).catch(() => Buffer.alloc(0)) : Buffer.alloc(0);
  }

  /**
   * Two checkpoints against each other (View Changes), with the bits each recorded
   * (CheckpointMeta.modes; both needed to compare recorded bits, else git's executable bit).
   */
  async betweenCommits(from: string, to: string, fromModes?: ModeRecord, toModes?: ModeRecord): Promise<FileChange[]> {
    const raw = parseRaw(
      await this.git.text(["diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", from, to]),
    );
    const records = fromModes && toModes ? { from: fromModes, to: toModes } : undefined;
    // Recorded on one side only: the file's bits opened up or narrowed, unless that side's record
    // was full (MAX_RECORDED_MODES), which leaves its bits unknown; then git's on both sides.
    const bitsOf = (p: string, oldMode: string, newMode: string): [number | undefined, number | undefined] => {
      const then = records && recordedMode(records.from, p);
      const now = records && recordedMode(records.to, p);
      const unknown = (bits: number | undefined, record: ModeRecord) =>
        bits === undefined && Object.keys(record).length >= MAX_RECORDED_MODES;
      if (
        !records ||
        (then === undefined && now === undefined) ||
        unknown(then, records.from) ||
        unknown(now, records.to)
      )
        return [gitPermissions(oldMode), gitPermissions(newMode)];
      return [then ?? gitPermissions(oldMode), now ?? gitPermissions(newMode)];
    };
    const listed = new Set(raw.map((e) => e.path));
    // Recorded differently and not listed: a file whose bits alone changed (both trees hold it as it is).
    const bitsOnly = records
      ? [...new Set([...Object.keys(records.from), ...Object.keys(records.to)])].filter(
          (p) => !listed.has(p) && recordedMode(records.from, p) !== recordedMode(records.to, p),
        )
      : [];
    const unchanged = bitsOnly.length
      ? parseLsTree(await this.git.text(["ls-tree", "-r", "-z", to, "--", ...bitsOnly]))
      : [];
    const blobs = await readBlobs(
      this.git,
      [...raw.flatMap((e) => [e.oldBlob, e.newBlob]), ...unchanged.map((e) => e.blob)],
      this.sizeLimitBytes,
    );
    const changes = raw.map((e) => ({
      ...this.change(e, e.oldBlob ? blobs.get(e.oldBlob) : undefined, e.newBlob ? blobs.get(e.newBlob) : undefined),
      ...(e.status === "modified" ? modeChange(...bitsOf(e.path, e.oldMode, e.newMode)) : {}),
      ...(e.newBlob ? { afterBlob: e.newBlob } : {}),
    }));
    const bitsChanged = unchanged.flatMap((e) => {
      const modes = modeChange(...bitsOf(e.path, e.mode, e.mode));
      if (modes.modeBefore === undefined) return [];
      const content = blobs.get(e.blob);
      return [{ ...this.change({ path: e.path, status: "modified" }, content, content), ...modes, afterBlob: e.blob }];
    });
    return capTotal([...changes, ...bitsChanged]);
  }

  /** Contents of blobs by id (those over the size limit are left out). */
  async blobTexts(ids: string[]): Promise<Map<string, Buffer | "too_large">> {
    return readBlobs(this.git, ids, this.sizeLimitBytes);
  }

  /** An "added" file shown as modified, with the content it had before (a pre-image). */
  withBefore(c: FileChange, before: Buffer | "too_large" | undefined): FileChange {
    const b = before instanceof Buffer ? before : undefined;
    const binary = c.binary || (b ? isBinary(b) : false);
    return {
      ...c,
      status: "modified",
      before: binary || !b ? "" : shownText(b),
      after: binary ? "" : c.after,
      binary,
      tooLarge: c.tooLarge || before === "too_large",
    };
  }

  private change(
    e: Pick<RawEntry, "path" | "status">,
    before: Buffer | "too_large" | undefined,
    after: Buffer | "too_large" | undefined,
  ): FileChange {
    const tooLarge = before === "too_large" || after === "too_large";
    const b = before instanceof Buffer ? before : undefined;
    const a = after instanceof Buffer ? after : undefined;
    const binary = (b ? isBinary(b) : false) || (a ? isBinary(a) : false);
    return {
      path: e.path,
      status: e.status,
      before: binary || !b ? "" : shownText(b),
      after: binary || !a ? "" : shownText(a),
      binary,
      tooLarge,
    };
  }
}
