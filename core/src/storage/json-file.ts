import * as fs from "node:fs";
import { DlineError } from "../errors.js";
import { corruptCopyPath, writeFileAtomic } from "./atomic-file.js";

/** A JSON object as stored on disk. */
export type JsonRecord = Record<string, unknown>;

export interface JsonFileOptions {
  /** Mode for the file (default 0o600; its folder is created 0o700). */
  mode?: number;
}

export async function writeJsonAtomic(file: string, value: unknown, options: JsonFileOptions = {}): Promise<void> {
  await writeFileAtomic(file, JSON.stringify(value, null, 2) + "\n", options);
}

/**
 * Moves a malformed file aside (never deleting it) and returns the `data_loss` error that says
 * where it went. If another process moved it first, the error names nothing and the caller
 * re-reads. The parse error's text is deliberately not used: Node quotes the file's content
 * in it, and the file may hold secrets.
 */
export async function keepAside(file: string, what: string): Promise<DlineError | undefined> {
  const target = corruptCopyPath(file);
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
    text = readSmallRegularFile(file) ?? (await fs.promises.readFile(file, "utf8"));
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

/** Up to this size a JSON file is read with synchronous calls (readSmallRegularFile). */
const SYNC_READ_MAX_BYTES = 1024 * 1024;

/**
 * Settings and state files are a few kilobytes: read with synchronous calls (microseconds each),
 * where an asynchronous read is four thread-pool round trips, each then waiting for the event
 * loop. A setting resolved from three files took 10-14 ms while a task started (its checkpoints'
 * scan waited for it). Undefined for a larger file or anything but a regular file: the caller
 * reads it asynchronously, as before. Only a regular file is opened here, and without blocking
 * (a named pipe put in its place meanwhile is not waited on, and is left to the caller).
 */
function readSmallRegularFile(file: string): string | undefined {
  const before = fs.statSync(file);
  if (!before.isFile() || before.size > SYNC_READ_MAX_BYTES) return undefined;
  const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || stat.size > SYNC_READ_MAX_BYTES) return undefined;
    return fs.readFileSync(fd, "utf8");
  } finally {
    fs.closeSync(fd);
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
