import { createHash } from "node:crypto";
import { isObject, statOrUndefined } from "./read-only-files.js";
import type { ParsedClineItem } from "./import-types.js";

/**
 * What an imported task records of its source (in task_metadata.json, `importedFrom`), so that a
 * later import can tell whether the source changed: a stamp of the source files' sizes and
 * modification times (cheap: no file is read), a hash of what was imported (exact), and how much
 * was written (so that a task continued or rewound in Dline is recognised).
 */
export interface ImportRecord {
  /** The version of what the import reads; an older one is imported again (the reading got better). */
  format: number;
  sourceStamp: string;
  contentHash: string;
  messageCount: number;
  journalEntries: number;
}

/** Raise when the import reads a source differently, so earlier imports are refreshed. */
export const IMPORT_FORMAT = 2;

function sha(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex");
}

/** Sizes and modification times of the source files (a missing one counts too), and other facts. */
export function sourceStamp(files: string[], facts: string[]): string {
  return sha([
    ...files.map((f) => {
      const st = statOrUndefined(f);
      return st ? [f, st.size, st.mtimeMs] : [f, -1];
    }),
    ...facts,
  ]).slice(0, 32);
}

/** Everything an import writes for the item, hashed. */
export function contentHash(parsed: ParsedClineItem): string {
  const { item } = parsed;
  return sha({
    title: item.title,
    taskText: parsed.taskText,
    workspaceRoot: item.workspaceRoot,
    status: parsed.status,
    favorite: parsed.favorite,
    messages: parsed.messages,
    conversation: parsed.conversation,
    requests: parsed.requests,
  });
}

export function importRecord(parsed: ParsedClineItem, stamp: string): ImportRecord {
  return {
    format: IMPORT_FORMAT,
    sourceStamp: stamp,
    contentHash: contentHash(parsed),
    messageCount: parsed.messages.length,
    journalEntries: parsed.conversation.length,
  };
}

/** The record kept in an imported task's metadata (undefined for imports that kept none). */
export function storedImportRecord(metadata: Record<string, unknown> | undefined): ImportRecord | undefined {
  const from = metadata?.importedFrom;
  if (!isObject(from) || !isObject(from.record)) return undefined;
  const r = from.record;
  if (typeof r.format !== "number" || typeof r.sourceStamp !== "string" || typeof r.contentHash !== "string")
    return undefined;
  return {
    format: r.format,
    sourceStamp: r.sourceStamp,
    contentHash: r.contentHash,
    messageCount: typeof r.messageCount === "number" ? r.messageCount : -1,
    journalEntries: typeof r.journalEntries === "number" ? r.journalEntries : -1,
  };
}
