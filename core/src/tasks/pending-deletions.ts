import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import lockfile from "proper-lockfile";
import type { Logger } from "../logging/logger.js";
import { moveAsideSync, writeFileAtomicSync, mkdirPrivate } from "../storage/index.js";
import { readJson } from "./json-read.js";
import { currentProcessIdentity, isClaimLive, type ProcessIdentity } from "./process-alive.js";

/**
 * The sidecar doing a deletion; its entries are finished by another one only once it is gone.
 * Its boot id and start time (written by this version) tell it from a later process that got
 * the same pid, as task claims do.
 */
interface DeletionOwner extends ProcessIdentity {
  pid: number;
  hostname: string;
  at: number;
}

export interface PendingDeletion extends DeletionOwner {
  taskId: string;
  workspaceRoot: string;
}

interface Journal {
  version: 1;
  tasks: PendingDeletion[];
  /** "Every task is gone" hooks still to run (delete everything, or the last task went). */
  allTasks: DeletionOwner | null;
}

const EMPTY: Journal = { version: 1, tasks: [], allTasks: null };

/**
 * tasks/pending-deletions.json: written before a deletion touches anything, so an interrupted
 * deletion is finished on the next start. Shared by every sidecar: each change is a
 * read-modify-write under a proper-lockfile lock, written atomically.
 */
export class PendingDeletions {
  constructor(
    private readonly file: string,
    private readonly logger: Logger,
  ) {}

  read(): Journal {
    const r = readJson<Journal>(this.file);
    if (r.ok && r.value && Array.isArray(r.value.tasks)) return { ...EMPTY, ...r.value };
    if (!r.ok && r.missing) return { ...EMPTY, tasks: [] };
    // Keep the unreadable journal for inspection; deletions it named are found again by the folder scan.
    const aside = moveAsideSync(this.file);
    this.logger.warn("pending-deletions.json was malformed; kept aside", { keptAside: aside });
    return { ...EMPTY, tasks: [] };
  }

  async add(entries: { taskId: string; workspaceRoot: string }[], allTasks = false): Promise<void> {
    const mine = thisProcess();
    await this.mutate((j) => {
      const known = new Set(j.tasks.map((t) => t.taskId));
      for (const e of entries) if (!known.has(e.taskId)) j.tasks.push({ ...e, ...mine });
      if (allTasks) j.allTasks = mine;
    });
  }

  async done(taskIds: string[]): Promise<void> {
    const gone = new Set(taskIds);
    await this.mutate((j) => {
      j.tasks = j.tasks.filter((t) => !gone.has(t.taskId));
    });
  }

  async markAllTasks(): Promise<void> {
    await this.mutate((j) => {
      j.allTasks = thisProcess();
    });
  }

  async allTasksDone(): Promise<void> {
    await this.mutate((j) => {
      j.allTasks = null;
    });
  }

  /**
   * Hands entries of dead sidecars over to this one (returns the journal after the takeover).
   * An entry of an earlier process that had this one's pid (before a reboot, say) is an orphan too.
   */
  async adoptOrphans(): Promise<Journal> {
    let result: Journal = { ...EMPTY, tasks: [] };
    await this.mutate((j) => {
      j.tasks = j.tasks.map((t) => (isOwnerLive(t) ? t : { ...t, ...thisProcess() }));
      if (j.allTasks && !isOwnerLive(j.allTasks)) j.allTasks = thisProcess();
      result = structuredClone(j);
    });
    return result;
  }

  private async mutate(change: (j: Journal) => void): Promise<void> {
    mkdirPrivate(path.dirname(this.file));
    // A holder SIGKILLed mid-deletion leaves its lock behind: it becomes stale after `stale`
    // (the live holder refreshes it every stale/2), and the retries outlast that.
    const release = await lockfile.lock(this.file, {
      realpath: false,
      stale: 5_000,
      retries: { retries: 150, minTimeout: 20, maxTimeout: 100 },
    });
    try {
      const j = this.read();
      change(j);
      if (j.tasks.length === 0 && !j.allTasks) fs.rmSync(this.file, { force: true });
      else writeFileAtomicSync(this.file, JSON.stringify(j));
    } finally {
      await release();
    }
  }
}

function thisProcess(): DeletionOwner {
  return { pid: process.pid, hostname: os.hostname(), at: Date.now(), ...currentProcessIdentity() };
}

/** Whether the process that wrote an entry runs (this one included), not merely one with its pid. */
function isOwnerLive(owner: DeletionOwner): boolean {
  if (owner.pid === process.pid && owner.hostname === os.hostname()) {
    const own = currentProcessIdentity();
    // Without an identity (an earlier version's entry) the pid alone says it is this process's.
    return (
      (owner.bootId === undefined || owner.bootId === own.bootId) &&
      (owner.startTicks === undefined || owner.startTicks === own.startTicks)
    );
  }
  return isClaimLive(owner.pid, owner.hostname, { bootId: owner.bootId, startTicks: owner.startTicks });
}
