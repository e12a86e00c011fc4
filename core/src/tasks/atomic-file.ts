import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { mkdirPrivate, PRIVATE_FILE_MODE } from "../storage/private-mode.js";

/** Writes `text` to `file` atomically: a unique temp file in the same folder, fsync, rename. */
export function writeFileAtomic(file: string, text: string | Uint8Array, mode = PRIVATE_FILE_MODE): void {
  mkdirPrivate(path.dirname(file));
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  const fd = fs.openSync(tmp, "w", mode);
  try {
    fs.writeSync(fd, typeof text === "string" ? Buffer.from(text) : text);
    fs.fsyncSync(fd);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  fs.renameSync(tmp, file);
}

/** Moves a malformed file aside as `<name>.corrupt-<time>` (never deleted); returns the new path. */
export function keepAside(file: string): string {
  const aside = `${file}.corrupt-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  fs.renameSync(file, aside);
  return aside;
}

export type JsonRead<T> = { ok: true; value: T } | { ok: false; missing: boolean; reason: string };

/** Reads and parses a JSON file; never throws for a missing or malformed file. */
export function readJson<T = unknown>(file: string): JsonRead<T> {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
    return { ok: false, missing, reason: missing ? "is missing" : (err as Error).message };
  }
  try {
    return { ok: true, value: JSON.parse(text) as T };
  } catch (err) {
    return { ok: false, missing: false, reason: `is not valid JSON (${(err as Error).message.slice(0, 120)})` };
  }
}
