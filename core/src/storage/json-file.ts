import * as fs from "node:fs";
import * as path from "node:path";
import { DlineError } from "../errors.js";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "./private-mode.js";

/** A JSON object as stored on disk. */
export type JsonRecord = Record<string, unknown>;

export interface JsonFileOptions {
  /** Mode for the file (and 0o700 for its folder when it is 0o600): secrets use 0o600. */
  mode?: number;
}

let tempCounter = 0;
/** Files whose folder was already swept for orphaned temp files by this process. */
const swept = new Set<string>();

function tempPrefix(file: string): string {
  return `.${path.basename(file)}.`;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes temp files that a killed writer (SIGKILL between open and rename) left beside
 * `file`. Only files of processes that no longer exist are removed; done once per file and
 * process, the first time we write it.
 */
async function removeOrphanTemps(file: string): Promise<void> {
  if (swept.has(file)) return;
  swept.add(file);
  const prefix = tempPrefix(file);
  let names: string[];
  try {
    names = await fs.promises.readdir(path.dirname(file));
  } catch {
    return;
  }
  for (const name of names) {
    const match = name.startsWith(prefix) ? /^(\d+)\.\d+\.tmp$/.exec(name.slice(prefix.length)) : null;
    if (match && Number(match[1]) !== process.pid && !isAlive(Number(match[1]))) {
      await fs.promises.rm(path.join(path.dirname(file), name), { force: true });
    }
  }
}

/** Folder for a file: created (0700, as every folder under the roots) when missing. */
export async function ensureDirFor(file: string): Promise<void> {
  await fs.promises.mkdir(path.dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Writes `text` to `file` atomically: a temporary file beside it, fsync, rename, then fsync of
 * the folder so the rename itself survives a crash. A reader (or a process killed mid-write)
 * therefore sees either the old or the new content, never a torn file.
 */
export async function writeFileAtomic(file: string, text: string, options: JsonFileOptions = {}): Promise<void> {
  await ensureDirFor(file);
  await removeOrphanTemps(file);
  const mode = options.mode ?? PRIVATE_FILE_MODE;
  const temp = path.join(path.dirname(file), `${tempPrefix(file)}${process.pid}.${++tempCounter}.tmp`);
  const handle = await fs.promises.open(temp, "w", mode);
  try {
    await handle.writeFile(text, "utf8");
    // The umask may have widened/narrowed the mode given to open(); secrets must be exact.
    if (options.mode !== undefined) await handle.chmod(mode);
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => {});
    await fs.promises.rm(temp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await fs.promises.rename(temp, file);
  } catch (err) {
    await fs.promises.rm(temp, { force: true });
    throw err;
  }
  await syncDir(path.dirname(file));
}

async function syncDir(dir: string): Promise<void> {
  if (process.platform === "win32") return;
  const handle = await fs.promises.open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export async function writeJsonAtomic(file: string, value: unknown, options: JsonFileOptions = {}): Promise<void> {
  await writeFileAtomic(file, JSON.stringify(value, null, 2) + "\n", options);
}

/** `<name>.corrupt-<time>` beside the file; the time is filesystem-safe ISO-8601. */
export function corruptCopyPath(file: string, now = new Date()): string {
  return `${file}.corrupt-${now.toISOString().replace(/[:.]/g, "-")}`;
}

/**
 * Moves a malformed file aside (never deleting it) and returns the `data_loss` error that says
 * where it went. If another process moved it first, the error names nothing and the caller
 * re-reads. The parse error's text is deliberately not used: Node quotes the file's content
 * in it, and the file may hold secrets.
 */
export async function keepAside(file: string, what: string): Promise<DlineError | undefined> {
  let target = corruptCopyPath(file);
  for (let n = 1; fs.existsSync(target); n++) target = `${corruptCopyPath(file)}-${n}`;
  try {
    await fs.promises.rename(file, target);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  return new DlineError(
    "data_loss",
    `${what} (${file}) was not valid JSON; it was kept at ${target} and a new file will be started.`,
  );
}

export type ReadResult = { kind: "missing" } | { kind: "ok"; value: JsonRecord } | { kind: "malformed" };

/** Reads and parses a JSON object file without side effects. */
export async function readJsonRecord(file: string): Promise<ReadResult> {
  let text: string;
  try {
    text = await fs.promises.readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { kind: "missing" };
    throw err;
  }
  try {
    const value: unknown = JSON.parse(text);
    if (value === null || typeof value !== "object" || Array.isArray(value)) return { kind: "malformed" };
    return { kind: "ok", value: value as JsonRecord };
  } catch {
    return { kind: "malformed" };
  }
}

/**
 * Reads a JSON object file; a missing file is `{}`. A malformed file is moved aside and the
 * `data_loss` error is thrown. Callers hold the file's lock (or accept a racing keep-aside).
 */
export async function loadJsonRecordOrKeepAside(file: string, what: string): Promise<JsonRecord | undefined> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const read = await readJsonRecord(file);
    if (read.kind === "missing") return undefined;
    if (read.kind === "ok") return read.value;
    const error = await keepAside(file, what);
    if (error) throw error;
  }
  return undefined;
}

/**
 * Tightens `target` to `wanted` when its mode on disk is wider (group/other bits set). Secret
 * files must be 0o600 and their folder 0o700; anything wider found on disk is repaired.
 */
export async function repairMode(target: string, wanted: number): Promise<void> {
  if (process.platform === "win32") return;
  try {
    const stat = await fs.promises.stat(target);
    if ((stat.mode & 0o777 & ~wanted) !== 0) await fs.promises.chmod(target, wanted);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}
