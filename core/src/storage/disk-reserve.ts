import * as fs from "node:fs";
import * as path from "node:path";
import { PRIVATE_FILE_MODE } from "./private-mode.js";

/** What the reserve holds: room to open the task index (its `-shm` and WAL) and to journal deletions. */
export const RESERVE_BYTES = 2 * 1024 * 1024;

/**
 * A few megabytes kept on the disk of the task folders, given back when that disk is nearly
 * full. Without it a full disk (often filled by what the person keeps, or by checkpoints) left
 * no room to open the task index, so every window failed to list tasks and no task could be
 * deleted to make room. The reserve is made only while the disk has plenty to spare, so it
 * never takes the last free space from the person's own work; several sidecars may make or
 * release it at once (a rename into place, an unlink).
 */
export class DiskReserve {
  constructor(
    /** The reserve's file, in the folder whose disk it keeps room on. */
    private readonly file: string,
    private readonly bytes = RESERVE_BYTES,
  ) {}

  /** Makes the reserve when it is missing and the disk has at least 8 times its size free. */
  ensure(): void {
    if (fs.existsSync(this.file)) return;
    const free = freeBytesOn(path.dirname(this.file));
    if (free === undefined || free < 8 * this.bytes) return;
    const staging = `${this.file}.${process.pid}.tmp`;
    try {
      // Written, not sized with truncate: a sparse file would hold no room at all.
      fs.writeFileSync(staging, Buffer.alloc(this.bytes), { mode: PRIVATE_FILE_MODE, flush: true });
      fs.renameSync(staging, this.file);
    } catch {
      fs.rmSync(staging, { force: true });
    }
  }

  /** Gives the reserve's room back when the disk has less than twice its size free; true when it did. */
  releaseIfLow(): boolean {
    const free = freeBytesOn(path.dirname(this.file));
    if (free === undefined || free >= 2 * this.bytes) return false;
    try {
      fs.unlinkSync(this.file);
      return true;
    } catch {
      return false;
    }
  }
}

/** Bytes an unprivileged process may still write on the file system of `dir`; undefined when unknown. */
export function freeBytesOn(dir: string): number | undefined {
  try {
    const st = fs.statfsSync(dir);
    return st.bavail * st.bsize;
  } catch {
    return undefined;
  }
}
