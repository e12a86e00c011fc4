import { createHash } from "node:crypto";
import * as path from "node:path";
import { isObject, readJsonFile } from "./read-only-files.js";

/**
 * What Cline recorded about a legacy task in its root's `state/taskHistory.json` (a JSON array of
 * history items, rewritten whole by Cline): the folder it ran in, the favourite flag, the range
 * of the conversation it had dropped from the model's context, the last model.
 */
export interface LegacyHistoryEntry {
  /** `cwdOnTaskInitialization`, exactly as recorded ("" when none). */
  cwd: string;
  favorite: boolean;
  /** `conversationHistoryDeletedRange`: inclusive indexes of api_conversation_history.json. */
  deletedRange?: [number, number];
  modelId: string;
  /** A hash of the whole entry: part of the import's record of its source. */
  fingerprint: string;
}

export interface LegacyHistoryIndex {
  /** The entry for a task of `root`, or why there is none. */
  entry(root: string, taskId: string): { entry?: LegacyHistoryEntry; problem?: string };
}

function rangeOf(v: unknown): [number, number] | undefined {
  return Array.isArray(v) && v.length === 2 && v.every((n) => Number.isInteger(n))
    ? [v[0] as number, v[1] as number]
    : undefined;
}

function toEntry(o: Record<string, unknown>): LegacyHistoryEntry {
  return {
    cwd: typeof o.cwdOnTaskInitialization === "string" ? o.cwdOnTaskInitialization : "",
    favorite: o.isFavorited === true,
    deletedRange: rangeOf(o.conversationHistoryDeletedRange),
    modelId: typeof o.modelId === "string" ? o.modelId : "",
    fingerprint: createHash("sha256").update(JSON.stringify(o)).digest("hex").slice(0, 32),
  };
}

/** Reads each root's taskHistory.json once (read-only), when a task of that root first asks. */
export function legacyHistoryIndex(): LegacyHistoryIndex {
  const roots = new Map<string, { byId?: Map<string, LegacyHistoryEntry>; problem?: string }>();
  const load = (root: string) => {
    let loaded = roots.get(root);
    if (loaded) return loaded;
    const name = path.join("state", "taskHistory.json");
    try {
      const value = readJsonFile(path.join(root, name), name);
      if (value === undefined) loaded = { problem: `no ${name} in ${root}` };
      else if (!Array.isArray(value)) loaded = { problem: `${name} does not hold a JSON array` };
      else {
        const byId = new Map<string, LegacyHistoryEntry>();
        for (const item of value)
          if (isObject(item) && typeof item.id === "string" && !byId.has(item.id)) byId.set(item.id, toEntry(item));
        loaded = { byId };
      }
    } catch (err) {
      loaded = { problem: (err as Error).message };
    }
    roots.set(root, loaded);
    return loaded;
  };
  return {
    entry(root, taskId) {
      const { byId, problem } = load(root);
      if (!byId) return { problem };
      const entry = byId.get(taskId);
      return entry ? { entry } : { problem: `the task is not in ${path.join(root, "state", "taskHistory.json")}` };
    },
  };
}
