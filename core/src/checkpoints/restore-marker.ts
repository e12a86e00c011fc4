import * as fs from "node:fs";
import * as path from "node:path";
import { isProcessAlive } from "../tasks/index.js";

/** A files restore under way: which task, to which checkpoint, in which process. */
export interface RestoreUnderWay {
  taskId: string;
  checkpointKind: string;
  checkpointCreatedAt: number;
  /** The "before restore" checkpoint saved just before the files were written (none from older versions). */
  undoId?: string;
  pid: number;
  startedAt: number;
}

/**
 * What the next process knows of a restore left part-way: all of it, or (a marker file that
 * cannot be read: damaged, or left empty by a writer of an older version killed between
 * creating and writing it) only that one was under way.
 */
export type RestoreLeftPartWay = RestoreUnderWay | { taskId?: undefined; undoId?: undefined };

/**
 * The file a files restore leaves in the shadow repository while it writes the workspace
 * (`dline-restore-under-way.json`), written and removed by the holder of the repository's lock.
 * A process stopped part-way (a `dline restore` killed, its sidecar at the end of its stop's
 * time) leaves it behind: the next process to open the repository finds it, and says the
 * files may be part-way (WorkspaceCheckpoints.recoveryNote) until the task is restored again
 * or saved again. Before, nothing said so, and the workspace matched no checkpoint.
 */
export class RestoreMarker {
  readonly file: string;

  constructor(gitDir: string) {
    this.file = path.join(gitDir, "dline-restore-under-way.json");
  }

  /**
   * Written whole, then renamed into place: a process killed while it writes leaves no marker
   * (nothing of the workspace was written yet) or a whole one, never an empty file whose
   * restore nobody could name. Never throws: a marker that cannot be written (a full disk) must
   * not stop the restore.
   */
  begin(underWay: RestoreUnderWay): void {
    const partial = `${this.file}.tmp`;
    try {
      fs.writeFileSync(partial, JSON.stringify(underWay));
      fs.renameSync(partial, this.file);
    } catch {
      // the restore goes on; only a cut one would go unsaid
      try {
        fs.rmSync(partial, { force: true });
      } catch {
        // a leftover the next begin writes over
      }
    }
  }

  clear(): void {
    try {
      fs.rmSync(this.file, { force: true });
    } catch {
      // left: the next process says the restore was cut short, which a new restore clears
    }
  }

  /** A restore another process left part-way (its process is gone); undefined when none. */
  leftPartWay(): RestoreLeftPartWay | undefined {
    let text: string;
    try {
      text = fs.readFileSync(this.file, "utf8");
    } catch {
      return undefined; // none (or a folder that cannot be read: nothing can be said of it)
    }
    let value: Partial<RestoreUnderWay> | null;
    try {
      value = JSON.parse(text) as Partial<RestoreUnderWay> | null;
    } catch {
      return {}; // a restore was under way, to a checkpoint nobody can name
    }
    if (typeof value !== "object" || value === null) return {};
    if (typeof value.taskId !== "string" || typeof value.checkpointCreatedAt !== "number") return {};
    if (typeof value.undoId !== "string") delete value.undoId;
    // This process's own restore under way, or another live one's: not left part-way.
    if (typeof value.pid === "number" && (value.pid === process.pid || isProcessAlive(value.pid))) return undefined;
    return value as RestoreUnderWay;
  }
}
