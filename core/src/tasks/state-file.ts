import * as fs from "node:fs";
import type { Logger } from "../logging/logger.js";
import { moveAsideSync, writeFileAtomicSync } from "../storage/index.js";
import { readJson } from "./json-read.js";
import { TaskFileDamaged } from "./task-db.js";

export interface StateRead<T> {
  value: T | undefined;
  /** Where the value came from: the file, its backup (the file was torn or corrupt), or nothing yet. */
  source: "state" | "backup" | "none";
  /** Set when a corrupt state.json was moved aside. */
  keptAside?: string;
}

/**
 * state.json with state.json.bak: the durable kernel snapshot of a task. A write renames the
 * current good version to .bak, then the new version (written and fsynced to a temp file) to
 * state.json; a crash between the two leaves .bak, which the reader falls back to. A torn or
 * corrupt state.json is moved aside (`.corrupt-<time>`), never overwritten, and .bak is used.
 */
export class StateFile<T extends object = Record<string, unknown>> {
  constructor(
    readonly file: string,
    readonly backup: string,
    private readonly logger?: Logger,
    private readonly isValid: (value: unknown) => boolean = (v) =>
      typeof v === "object" && v !== null && !Array.isArray(v),
  ) {}

  /**
   * Reads the state. `keepAsideDamaged` (default) moves a corrupt state.json aside; a reader
   * that does not own the task passes false and only falls back to the backup in memory.
   */
  read(options: { keepAsideDamaged?: boolean } = {}): StateRead<T> {
    const main = readJson<T>(this.file);
    if (main.ok && this.isValid(main.value)) return { value: main.value, source: "state" };
    const bak = readJson<T>(this.backup);
    const bakOk = bak.ok && this.isValid(bak.value);
    if (main.ok === false && main.missing) {
      return bakOk ? { value: (bak as { value: T }).value, source: "backup" } : { value: undefined, source: "none" };
    }
    const reason = main.ok ? "does not hold an object" : main.reason;
    if (!bakOk) throw new TaskFileDamaged(this.file, `${reason}, and state.json.bak cannot be used either`);
    if (options.keepAsideDamaged === false) return { value: (bak as { value: T }).value, source: "backup" };
    const keptAside = moveAsideSync(this.file);
    this.logger?.warn("state.json was damaged; using state.json.bak", { file: this.file, keptAside, reason });
    return { value: (bak as { value: T }).value, source: "backup", keptAside };
  }

  write(value: T): void {
    const text = JSON.stringify(value);
    const current = readJson(this.file);
    if (current.ok && this.isValid(current.value)) {
      fs.renameSync(this.file, this.backup);
    } else if (!current.ok && !current.missing) {
      moveAsideSync(this.file);
    }
    writeFileAtomicSync(this.file, text);
  }
}
