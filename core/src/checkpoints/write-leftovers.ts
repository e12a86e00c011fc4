import * as fs from "node:fs";
import * as path from "node:path";
import type { ShadowGit } from "./git-process.js";
import type { PackingLock } from "./packing-lock.js";
import { packedIds, reachableObjects, removePack } from "./unreachable-packs.js";

/**
 * A file dated this much before a step began still counts as the step's: file times come from a
 * coarse clock (and are whole seconds, or two, on some file systems). What an earlier step
 * wrote in that moment is kept all the same when anything references it.
 */
const CLOCK_SLACK_MS = 2000;

const FAN_OUT = /^[0-9a-f]{2}$/;
const LOOSE = /^[0-9a-f]{38}$/;
const PACK_INDEX = /^(pack-[0-9a-f]{40})\.idx$/;
/**
 * Files git (and pack-writer.ts) write under a temporary name and rename once whole: a loose
 * object (`tmp_obj_*`), a pack and its indexes (`tmp_pack_*`, `tmp_idx_*`, `tmp_rev_*`), a
 * repack's (`.tmp-<pid>-pack-*`). A git that fails or is killed part-way leaves them.
 */
const TEMPORARY = /^(tmp_|\.tmp-)/;

/** What a failed step left and was removed. */
export interface RemovedLeftovers {
  /** Loose objects nothing references. */
  loose: number;
  /** Packs none of whose objects anything references. */
  packs: number;
  /** Half-written object and pack files. */
  temporary: number;
  /** Temporary pack files left because a repack ran (they may be its own). */
  keptForPacking: number;
  bytes: number;
}

/**
 * Removes what a step under the repository lock wrote into the objects folder before it failed
 * part-way (a full disk, a stopped git): the objects it wrote that nothing references (no ref,
 * HEAD, reflog or the index), and the half-written files of its git processes. A file counts as
 * the step's when it is dated from the step's start on (`begin`); everything else stays: the
 * objects of other checkpoints, of pre-images and of the index, anything older, and what the
 * repack that runs outside the lock (pack-maintenance.ts) is writing. Its packs hold copies of
 * objects that exist already (one holding any object referenced stays); its temporary files are
 * removed only when no repack holds the packing lock (and a repack that lost one would only
 * fail: it removes nothing before its new pack is in place). Loose objects and their temporary
 * files are written only by holders of the repository lock, which the caller holds, and a step
 * fails only once its own git processes have ended (both-settled.ts). The removal itself writes
 * nothing (it must work on a full disk).
 */
export class WriteLeftovers {
  constructor(
    private readonly git: ShadowGit,
    private readonly objectsDir: string,
    private readonly packingLock: PackingLock,
    /** Resolves when this process's own packing (if any) has ended. */
    private readonly packingSettled: () => Promise<void>,
  ) {}

  /** A step under the lock begins: the time from which files count as its own. */
  begin(): number {
    return Date.now() - CLOCK_SLACK_MS;
  }

  /** After the step that began at `since` failed, still under the lock: removes its leftovers. */
  async remove(since: number): Promise<RemovedLeftovers> {
    const removed: RemovedLeftovers = { loose: 0, packs: 0, temporary: 0, keptForPacking: 0, bytes: 0 };
    const loose = this.youngLoose(since);
    for (const file of loose.temporary) this.unlink(file, removed, "temporary");
    const packDir = path.join(this.objectsDir, "pack");
    if (youngTemporary(packDir, since).length) await this.removeTemporaryPacks(packDir, since, removed);
    const packs = youngPacks(packDir, since);
    // Last: git reads every reference for this, and a damaged repository fails it.
    if (loose.objects.length || packs.length) {
      const reachable = await reachableObjects(this.git);
      for (const { id, file } of loose.objects) if (!reachable.has(id)) this.unlink(file, removed, "loose");
      for (const base of packs) {
        const ids = packedIds(path.join(packDir, `${base}.idx`));
        if (!ids || ids.some((id) => reachable.has(id))) continue;
        removed.bytes += removePack(packDir, base);
        removed.packs++;
      }
    }
    return removed;
  }

  /**
   * Half-written pack files: a repack running now writes files of the same names. This process's
   * own is waited for; when another process packs now, they stay (to the next garbage
   * collection). Listed before the packing lock is looked at: a repack writes only while it
   * holds it, so a file listed while nobody held it is no running repack's (one that starts
   * after the look writes files of its own, not listed).
   */
  private async removeTemporaryPacks(packDir: string, since: number, removed: RemovedLeftovers): Promise<void> {
    await this.packingSettled();
    const listed = youngTemporary(packDir, since);
    if (this.packingLock.held()) {
      removed.keptForPacking = listed.length;
      return;
    }
    for (const file of listed) this.unlink(file, removed, "temporary");
  }

  /**
   * The loose objects and temporary files dated from `since` on. Only folders changed since then
   * can hold a file written since (an entry made in a folder dates the folder): the others are
   * not read.
   */
  private youngLoose(since: number): { objects: { id: string; file: string }[]; temporary: string[] } {
    const objects: { id: string; file: string }[] = [];
    const temporary: string[] = [];
    for (const name of readdir(this.objectsDir)) {
      const dir = path.join(this.objectsDir, name);
      if (TEMPORARY.test(name)) {
        if (datedFrom(dir, since)) temporary.push(dir);
        continue;
      }
      if (!FAN_OUT.test(name) || !datedFrom(dir, since)) continue;
      for (const entry of readdir(dir)) {
        const file = path.join(dir, entry);
        if (!datedFrom(file, since)) continue;
        if (TEMPORARY.test(entry)) temporary.push(file);
        else if (LOOSE.test(entry)) objects.push({ id: name + entry, file });
      }
    }
    return { objects, temporary };
  }

  private unlink(file: string, removed: RemovedLeftovers, kind: "loose" | "temporary"): void {
    try {
      const size = fs.lstatSync(file).size;
      fs.unlinkSync(file);
      removed.bytes += size;
      removed[kind]++;
    } catch {
      // Gone meanwhile.
    }
  }
}

/** The packs whose index was written from `since` on (git and pack-writer.ts write it last), but those git was told to keep. */
function youngPacks(packDir: string, since: number): string[] {
  const names = readdir(packDir);
  // A multi-pack index names its packs: removing one would break it (gc's business).
  if (names.includes("multi-pack-index")) return [];
  const present = new Set(names);
  return names.flatMap((name) => {
    const base = PACK_INDEX.exec(name)?.[1];
    if (!base || present.has(`${base}.keep`) || present.has(`${base}.promisor`)) return [];
    return datedFrom(path.join(packDir, name), since) ? [base] : [];
  });
}

function youngTemporary(packDir: string, since: number): string[] {
  return readdir(packDir)
    .filter((name) => TEMPORARY.test(name))
    .map((name) => path.join(packDir, name))
    .filter((file) => datedFrom(file, since));
}

function datedFrom(file: string, since: number): boolean {
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  return !!st && st.mtimeMs >= since;
}

function readdir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
