import * as fs from "node:fs";
import * as path from "node:path";
import { isProcessAlive } from "../tasks/index.js";

/** A files restore under way: which task, to which checkpoint, in which process. */
export interface RestoreUnderWay {
  taskId: string;
  checkpointKind: string;
  checkpointCreatedAt: number;
  pid: number;
  startedAt: number;
}

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

  /** Never throws: a marker that cannot be written (a full disk) must not stop the restore. */
  begin(underWay: RestoreUnderWay): void {
    try {
      fs.writeFileSync(this.file, JSON.stringify(underWay));
    } catch {
      // the restore goes on; only a cut one would go unsaid
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
  leftPartWay(): RestoreUnderWay | undefined {
    let value: Partial<RestoreUnderWay>;
    try {
      value = JSON.parse(fs.readFileSync(this.file, "utf8")) as Partial<RestoreUnderWay>;
    } catch {
      return undefined; // none, or unreadable: nothing can be said of it
    }
    if (typeof value.taskId !== "string" || typeof value.checkpointCreatedAt !== "number") return undefined;
    // This process's own restore under way, or another live one's: not left part-way.
    if (typeof value.pid === "number" && (value.pid === process.pid || isProcessAlive(value.pid))) return undefined;
    return value as RestoreUnderWay;
  }
}
