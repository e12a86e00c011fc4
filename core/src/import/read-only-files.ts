import * as fs from "node:fs";
import { MalformedClineFile } from "./import-types.js";

/**
 * The only ways the import touches Cline's folders: stat, list, read. Nothing here opens a
 * file for writing, renames or locks it (specs/cline-import.md: read-only on Cline's files).
 */

export function statOrUndefined(file: string): fs.Stats | undefined {
  try {
    return fs.statSync(file);
  } catch {
    return undefined;
  }
}

export function isDirectory(dir: string): boolean {
  return statOrUndefined(dir)?.isDirectory() === true;
}

export function listDir(dir: string): fs.Dirent[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** Parses a JSON file; a missing file is `undefined`, an unreadable or malformed one throws MalformedClineFile. */
export function readJsonFile(file: string, name = file): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new MalformedClineFile(name, `could not be read (${(err as Error).message.slice(0, 120)})`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new MalformedClineFile(name, `is not valid JSON (${(err as Error).message.slice(0, 120)})`);
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function finiteNumber(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}
