import * as fs from "node:fs";
import * as path from "node:path";
import { assertSafeId, mkdirPrivate, PRIVATE_FILE_MODE } from "../storage/index.js";
import { compareNames } from "../text/name-order.js";

export const DEFAULT_COMMAND_LOG_BUDGET = 200 * 1024 * 1024;

/**
 * tmp/command-logs/ of one task. Logs survive sessions (chat rows link to them); the folder is
 * bounded by a total size budget, and `enforceBudget` drops the oldest logs first (by creation
 * order recorded in the name, then mtime) until the rest fits. Age alone never removes a log.
 */
export class CommandLogs {
  constructor(
    readonly dir: string,
    private readonly budgetBytes = DEFAULT_COMMAND_LOG_BUDGET,
  ) {}

  /** Path of the log of one command; the name starts with a sortable time so "oldest" is stable. */
  logPath(commandId: string, startedAt = Date.now()): string {
    assertSafeId("command id", commandId);
    return path.join(this.dir, `${String(startedAt).padStart(15, "0")}-${commandId}.log`);
  }

  append(file: string, chunk: string | Uint8Array): void {
    mkdirPrivate(this.dir);
    fs.appendFileSync(file, chunk, { mode: PRIVATE_FILE_MODE });
  }

  totalBytes(): number {
    return this.entries().reduce((n, e) => n + e.size, 0);
  }

  /** Removes the oldest logs until the folder fits the budget; `keep` (a log being written) is never removed. Returns removed names. */
  enforceBudget(keep?: string): string[] {
    const entries = this.entries();
    let total = entries.reduce((n, e) => n + e.size, 0);
    const removed: string[] = [];
    for (const e of entries) {
      if (total <= this.budgetBytes) break;
      if (keep && path.resolve(keep) === e.file) continue;
      fs.rmSync(e.file, { force: true });
      total -= e.size;
      removed.push(path.basename(e.file));
    }
    return removed;
  }

  private entries(): { file: string; size: number; name: string; mtimeMs: number }[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw err;
    }
    const out: { file: string; size: number; name: string; mtimeMs: number }[] = [];
    for (const name of names) {
      const file = path.join(this.dir, name);
      try {
        const st = fs.lstatSync(file);
        if (st.isFile()) out.push({ file, size: st.size, name, mtimeMs: st.mtimeMs });
      } catch {
        // removed meanwhile
      }
    }
    // Names start with the zero-padded start time; foreign names fall back to mtime.
    const key = (e: { name: string; mtimeMs: number }) =>
      /^\d{15}-/.test(e.name) ? Number(e.name.slice(0, 15)) : e.mtimeMs;
    return out.sort((a, b) => key(a) - key(b) || compareNames(a.name, b.name));
  }
}
