import * as fs from "node:fs";
import { MalformedClineFile } from "./import-types.js";

/**
 * The only ways the import touches Cline's folders: stat, list, read. Nothing here opens a
 * file for writing, renames or locks it: the import is read-only on Cline's files.
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

/**
 * A JSON file's text. Cline writes UTF-8 without a byte order mark, but a file saved again by an
 * editor on Windows may start with one (UTF-8's, or UTF-16's with the text in UTF-16): the mark
 * says how to read it and is not part of the JSON.
 */
function readText(file: string, name: string): string | undefined {
  let bytes: Buffer;
  try {
    // Not a regular file (a folder, a named pipe that would block the read forever): malformed.
    if (!fs.statSync(file).isFile()) throw new MalformedClineFile(name, "is not a regular file");
    bytes = fs.readFileSync(file);
  } catch (err) {
    if (err instanceof MalformedClineFile) throw err;
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new MalformedClineFile(name, `could not be read (${(err as Error).message.slice(0, 120)})`);
  }
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return bytes.toString("utf8", 3);
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return bytes.toString("utf16le", 2);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    const swapped = Buffer.from(bytes.subarray(2, 2 + ((bytes.length - 2) & ~1)));
    return swapped.swap16().toString("utf16le");
  }
  return bytes.toString("utf8");
}

/**
 * Why a text is not valid JSON, in words that quote none of it: V8's "Unexpected token" message
 * quotes the start of the file, which may be anything (a file of secrets a link points to), and
 * the reason is shown to the user and sent over the wire. Messages with a position quote nothing.
 */
function parseErrorReason(err: unknown): string {
  const message = err instanceof Error ? err.message : "";
  if (/ in JSON at position \d+/.test(message)) return message.slice(0, 120);
  if (/Unexpected end of JSON input/.test(message)) return "Unexpected end of JSON input";
  return "an unexpected character";
}

/** Parses a JSON file; a missing file is `undefined`, an unreadable or malformed one throws MalformedClineFile. */
export function readJsonFile(file: string, name = file): unknown {
  const text = readText(file, name);
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new MalformedClineFile(name, `is not valid JSON (${parseErrorReason(err)})`);
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function finiteNumber(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

/**
 * The complete elements at the start of a JSON array whose text was cut short (a write that
 * never finished): undefined when the text is not such an array, e.g. when it is damaged
 * somewhere other than its end. Strings and nesting are tracked, so a bracket inside a string
 * does not count.
 */
export function cutShortArrayPrefix(text: string): unknown[] | undefined {
  const start = text.search(/\S/);
  if (start < 0 || text[start] !== "[") return undefined;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let lastEnd = start + 1;
  for (let k = start; k < text.length; k++) {
    const c = text[k];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "[" || c === "{") depth++;
    else if (c === "]" || c === "}") {
      depth--;
      if (depth === 0) return undefined; // the array is closed: damaged, not cut short
      if (depth === 1) lastEnd = k + 1;
    } else if (c === "," && depth === 1) lastEnd = k;
  }
  try {
    const value = JSON.parse(`${text.slice(start, lastEnd).replace(/,\s*$/, "")}]`) as unknown;
    return Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Like readJsonFile for a file that holds a JSON array, but a file cut short gives the elements
 * it holds whole (`cutShort` set) instead of throwing; any other damage still throws.
 */
export function readJsonArrayFile(file: string, name = file): { values: unknown[]; cutShort: boolean } | undefined {
  const text = readText(file, name);
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (err) {
    const prefix = cutShortArrayPrefix(text);
    if (prefix) return { values: prefix, cutShort: true };
    throw new MalformedClineFile(name, `is not valid JSON (${parseErrorReason(err)})`);
  }
  if (!Array.isArray(value)) throw new MalformedClineFile(name, "does not hold a JSON array");
  return { values: value, cutShort: false };
}
