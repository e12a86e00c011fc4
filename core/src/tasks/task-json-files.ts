import * as fs from "node:fs";
import { type TaskLayout, writeFileAtomicSync, mkdirPrivate, PRIVATE_FILE_MODE } from "../storage/index.js";
import { readJson } from "./json-read.js";
import { TaskFileDamaged } from "./task-db.js";

/**
 * The small JSON files of a task: context.json, context_history.jsonl and task_metadata.json.
 * Whole-file writes are atomic (temp file + rename); context_history.jsonl is append-only and
 * a torn last line (a crash mid-append) is skipped when read, not treated as damage.
 */
export class TaskJsonFiles {
  constructor(private readonly layout: TaskLayout) {}

  readContext(): Record<string, unknown> | undefined {
    return this.readObject(this.layout.contextJson);
  }

  writeContext(value: Record<string, unknown>): void {
    writeFileAtomicSync(this.layout.contextJson, JSON.stringify(value));
  }

  appendContextHistory(record: Record<string, unknown>): void {
    mkdirPrivate(this.layout.dir);
    fs.appendFileSync(this.layout.contextHistoryJsonl, JSON.stringify(record) + "\n", { mode: PRIVATE_FILE_MODE });
  }

  readContextHistory(): Record<string, unknown>[] {
    let text: string;
    try {
      text = fs.readFileSync(this.layout.contextHistoryJsonl, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw err;
    }
    const lines = text.split("\n");
    const out: Record<string, unknown>[] = [];
    lines.forEach((line, i) => {
      if (!line.trim()) return;
      try {
        out.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // Only the last line may be torn by a crash; anything earlier is damage.
        if (i < lines.length - 1 && lines.slice(i + 1).some((l) => l.trim())) {
          throw new TaskFileDamaged(this.layout.contextHistoryJsonl, `has a malformed line ${i + 1}`);
        }
      }
    });
    return out;
  }

  readMetadata(): Record<string, unknown> | undefined {
    return this.readObject(this.layout.metadataJson);
  }

  writeMetadata(value: Record<string, unknown>): void {
    writeFileAtomicSync(this.layout.metadataJson, TaskJsonFiles.metadataBytes(value));
  }

  /** The bytes of task_metadata.json for `value` (an import writes many tasks' files itself, then syncs them at once). */
  static metadataBytes(value: Record<string, unknown>): Buffer {
    return Buffer.from(JSON.stringify(value));
  }

  private readObject(file: string): Record<string, unknown> | undefined {
    const r = readJson<Record<string, unknown>>(file);
    if (r.ok) {
      if (typeof r.value === "object" && r.value !== null && !Array.isArray(r.value)) return r.value;
      throw new TaskFileDamaged(file, "does not hold a JSON object");
    }
    if (r.missing) return undefined;
    throw new TaskFileDamaged(file, r.reason);
  }
}
