import * as fs from "node:fs";

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
