import * as fs from "node:fs";
import * as path from "node:path";
import { mkdirPrivateInExisting, writeFileAtomicSync } from "../storage/index.js";
import { isProcessAlive } from "../tasks/index.js";

/**
 * The seqs a process hands out for a task it does not hold: a checkpoint status told to every
 * task of a folder, in each window that shows one. The holder reserves its seqs in state.json
 * before it hands them out, and the next holder starts above that reservation; a process that
 * does not hold the task may not write state.json, so it reserves its own in a file of its own
 * (`seqs-shown/<pid>`, docs/storage.md), which every process that takes the task, or loads it,
 * starts above too. Without it, a window's status event and the next holder's first event had the
 * same seq, and that window's subscriber, following the new holder, skipped the holder's one.
 */
export class ShownSeqs {
  constructor(
    private readonly dir: string,
    private readonly pid = process.pid,
  ) {}

  /**
   * Reserves seqs up to `upTo` for this process (before it hands them out). Throws when it cannot
   * write, ENOENT when the task's folder is gone: a task another process deleted is not brought
   * back by a window that still showed it (its folder, listed again after a restart).
   */
  reserve(upTo: bigint): void {
    mkdirPrivateInExisting(this.dir);
    writeFileAtomicSync(path.join(this.dir, String(this.pid)), `${upTo}\n`, { folderMustExist: true });
  }

  /** The highest seq any process reserved here (0n when none); `others`: leaving out this process's. */
  highest(options: { others?: boolean } = {}): bigint {
    let top = 0n;
    for (const { pid, upTo } of this.read()) if (!(options.others && pid === this.pid) && upTo > top) top = upTo;
    return top;
  }

  /**
   * Removes the reservations of processes that have ended, once the holder's reservation on
   * disk (`covered`) is above them: nothing can hand those seqs out any more.
   */
  removeEnded(covered: bigint): void {
    for (const { pid, upTo, file } of this.read()) {
      if (pid === this.pid || upTo > covered || isProcessAlive(pid)) continue;
      fs.rmSync(file, { force: true });
    }
  }

  private read(): { pid: number; upTo: bigint; file: string }[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return []; // none yet
    }
    const found: { pid: number; upTo: bigint; file: string }[] = [];
    for (const name of names) {
      if (!/^\d+$/.test(name)) continue; // a write's temporary file
      const file = path.join(this.dir, name);
      try {
        found.push({ pid: Number(name), upTo: BigInt(fs.readFileSync(file, "utf8").trim()), file });
      } catch {
        // unreadable or not a number: the reservation it held is not known (state.json's stands)
      }
    }
    return found;
  }
}
