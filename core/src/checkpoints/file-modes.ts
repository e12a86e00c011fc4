import { chmodSync, realpathSync, type Stats } from "node:fs";
import * as path from "node:path";
import { lstatIfPresent, toAbsolute } from "./workspace-paths.js";

/**
 * Permission bits the checkpoints record (CheckpointMeta.modes): repository path to octal bits
 * ("600"). Git trees hold only 100644 or 100755, so a file a restore makes again would
 * otherwise get the umask's bits: a private key a command deleted came back readable by all.
 */
export type ModeRecord = Record<string, string>;

/**
 * How many files' bits a checkpoint records (every checkpoint's message carries the list). A
 * workspace rarely holds more than a few private files. Past the cap, a file the list has no room
 * for is not recorded until a save stages it again while there is room (one whose file is gone
 * leaves the list): a restore that makes it again gives it the umask's bits, as before.
 */
export const MAX_RECORDED_MODES = 200;

/**
 * The bits a checkpoint records of a file: those of a regular file that lacks any bit of 0644
 * (0755 when anyone may execute it), i.e. its group or others may not read (or execute) it, or
 * its owner may not write it: a private key at 0600, a script at 0700 or 0750, a read-only 0444.
 * A restore that made such a file again without the record would give it git's bits, 0644 or
 * 0755 under the usual umask 022: more open than it was. A file with more bits than those
 * (0664, 0666) is not recorded: the umask's bits are no more open than it (under 022). Links and
 * the other kinds of file are never recorded; set-id and sticky bits are not kept.
 */
export function recordableMode(st: Stats | undefined): number | undefined {
  if (!st?.isFile()) return undefined;
  const perms = st.mode & 0o777;
  const usual = perms & 0o111 ? 0o755 : 0o644;
  return (usual & ~perms) !== 0 ? perms : undefined;
}

/** The bits `record` holds for `repoPath`; undefined when none (or not valid). */
export function recordedMode(record: ModeRecord | undefined, repoPath: string): number | undefined {
  const text = record && Object.hasOwn(record, repoPath) ? record[repoPath] : undefined;
  return typeof text === "string" && /^[0-7]{3}$/.test(text) ? parseInt(text, 8) : undefined;
}

/** The bits git's mode of a file stands for, 644 or 755; undefined for a link, a submodule or no file. */
export function gitPermissions(mode: string): number | undefined {
  return mode === "100755" ? 0o755 : mode === "100644" ? 0o644 : undefined;
}

/** Bits as octal text, as records and Compare give them ("600"). */
export function permissionsText(bits: number): string {
  return (bits & 0o777).toString(8).padStart(3, "0");
}

/** `perms` with the executable bits set where readable (`executable`) or cleared: a snapshot's 100755 or 100644 wins. */
export function withExecutable(perms: number, executable: boolean): number {
  return executable ? perms | ((perms & 0o444) >> 2) : perms & ~0o111;
}

/**
 * The bits a restore gives a file it writes with the snapshot's `executable`: one there keeps
 * its own (`current`), narrowed to those recorded at the checkpoint (`recorded`, when any); one
 * gone gets those recorded. Never more open than the file is now, nor than it was then.
 * Undefined: neither is known (the umask's, as git checkout gives).
 */
export function restoredPermissions(
  current: number | undefined,
  recorded: number | undefined,
  executable: boolean,
): number | undefined {
  const now = current === undefined ? undefined : withExecutable(current, executable);
  const then = recorded === undefined ? undefined : withExecutable(recorded, executable);
  if (now === undefined) return then;
  return then === undefined ? now : now & then;
}

/**
 * Narrows the files a checkpoint's `record` names that are still there to the bits recorded
 * then, except `skip` (what the restore wrote or deleted). A `chmod` alone (a command that opened
 * a private key to 0644 without changing it) changes nothing git or the watcher sees, so no
 * restore writes that file. Never widens; a file reached through a link to a folder is left as
 * it is. Returns the paths narrowed.
 */
export function narrowToRecorded(
  workspaceRoot: string,
  record: ModeRecord | undefined,
  skip: ReadonlySet<string>,
): string[] {
  if (!record) return [];
  const narrowed: string[] = [];
  let root: string | undefined;
  for (const p of Object.keys(record).sort()) {
    const bits = recordedMode(record, p);
    if (bits === undefined || skip.has(p) || p.split("/").some((seg) => seg === "" || seg === "." || seg === ".."))
      continue;
    const abs = toAbsolute(workspaceRoot, p);
    try {
      const st = lstatIfPresent(abs);
      if (!st?.isFile()) continue;
      const perms = st.mode & 0o777;
      if ((perms & ~bits) === 0) continue;
      root ??= realpathSync(workspaceRoot);
      if (realpathSync(path.dirname(abs)) !== path.dirname(toAbsolute(root, p))) continue;
      chmodSync(abs, perms & bits);
      narrowed.push(p);
    } catch {
      // Not there any more, or not ours to change: left as it is.
    }
  }
  return narrowed;
}

/** The record a commit message carries (its first JSON line's `modes`), valid entries only; undefined when none. */
export function modesIn(message: string): ModeRecord | undefined {
  const line = message.split("\n").find((l) => l.startsWith("{"));
  if (!line) return undefined;
  try {
    const modes = (JSON.parse(line) as { modes?: unknown }).modes;
    if (!modes || typeof modes !== "object" || Array.isArray(modes)) return undefined;
    const record: ModeRecord = {};
    for (const [p, m] of Object.entries(modes as Record<string, unknown>))
      if (typeof m === "string" && /^[0-7]{3}$/.test(m) && p !== "__proto__") record[p] = m;
    return record;
  } catch {
    return undefined;
  }
}

/** Paths checked per slice when many are (a first baseline's every file): between slices other work runs. */
const SLICE = 2000;

/**
 * The recordable bits of the workspace's files that one process's saves know of, learned from
 * what the saves stage (a scan's changed and new files, the paths tools recorded, what a watcher
 * saw change): each of those is looked at anyway, and a file nothing staged kept its bits, short
 * of a `chmod` alone, which neither git nor the watcher's saves see. Carried from the newest
 * snapshot's record from one process to the next.
 */
export class FileModes {
  private readonly modes = new Map<string, number>();

  constructor(private readonly workspaceRoot: string) {}

  /** Starts from a snapshot's record. */
  adopt(record: ModeRecord): void {
    for (const p of Object.keys(record)) {
      const bits = recordedMode(record, p);
      if (bits !== undefined) this.put(p, bits);
    }
  }

  /** What a scan found of the paths it listed: `found` the recordable bits of those it looked at. */
  learn(listed: Iterable<string>, found: ReadonlyMap<string, number>): void {
    for (const p of listed) {
      const bits = found.get(p);
      if (bits === undefined) this.modes.delete(p);
      else this.put(p, bits);
    }
  }

  /** Looks at these paths now (synchronous lstat, in slices). */
  async look(paths: readonly string[], signal?: AbortSignal): Promise<void> {
    for (let i = 0; i < paths.length; i += SLICE) {
      if (i) {
        await new Promise((resolve) => setImmediate(resolve));
        signal?.throwIfAborted();
      }
      for (const p of paths.slice(i, i + SLICE)) {
        const bits = recordableMode(this.lstat(p));
        if (bits === undefined) this.modes.delete(p);
        else this.put(p, bits);
      }
    }
  }

  /**
   * The record of a checkpoint saved now: the known files as they are now (at most
   * MAX_RECORDED_MODES lstat calls), those gone or opened up since left out. Empty when there is
   * none, which says so: a snapshot without a record is one of an earlier version.
   */
  record(): ModeRecord {
    const record: ModeRecord = {};
    for (const p of [...this.modes.keys()].sort()) {
      const bits = recordableMode(this.lstat(p));
      if (bits === undefined || p === "__proto__") this.modes.delete(p);
      else {
        this.modes.set(p, bits);
        record[p] = permissionsText(bits);
      }
    }
    return record;
  }

  /** Past the cap, a new path is not recorded (see MAX_RECORDED_MODES). */
  private put(p: string, bits: number): void {
    if (this.modes.has(p) || this.modes.size < MAX_RECORDED_MODES) this.modes.set(p, bits);
  }

  private lstat(p: string): Stats | undefined {
    try {
      return lstatIfPresent(toAbsolute(this.workspaceRoot, p));
    } catch {
      return undefined; // not readable: nothing a restore could make again there
    }
  }
}
