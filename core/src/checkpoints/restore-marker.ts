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
  /**
   * What `leftPartWayNow` last found, and the file as it was then; `lookAgain` when a marker was
   * there and said nothing (its restore still running, or the file unreadable for now).
   */
  private seen: { file: string; answer: RestoreLeftPartWay | undefined; lookAgain: boolean } | undefined;

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

  /**
   * The marker goes. One that cannot be removed is not said again by this process (until it
   * changes): the next process says it, and a new restore clears it.
   */
  clear(): void {
    try {
      fs.rmSync(this.file, { force: true });
    } catch {
      // left: see above
    }
    this.seen = { file: this.signature(), answer: undefined, lookAgain: false };
  }

  /**
   * `leftPartWay` as it stands now, for a process that keeps asking (each status and save):
   * the file is read again only when it changed since the last look, or when the restore it
   * named was still running then (another window's, which may since have been killed). A
   * process that looked before another window's restore was cut short says so from its next
   * look, not only a process started after it.
   */
  leftPartWayNow(): RestoreLeftPartWay | undefined {
    const file = this.signature();
    if (this.seen && this.seen.file === file && !this.seen.lookAgain) return this.seen.answer;
    const answer = this.leftPartWay();
    this.seen = { file, answer, lookAgain: file !== "none" && answer === undefined };
    return answer;
  }

  /** The file's identity and version ("none" when absent): a marker written again is a new file (renamed into place). */
  private signature(): string {
    try {
      const st = fs.statSync(this.file, { bigint: true });
      return `${st.ino}:${st.size}:${st.mtimeNs}`;
    } catch {
      return "none";
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
