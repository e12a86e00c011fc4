import * as fs from "node:fs";
import type { Logger } from "../logging/logger.js";
import type { InstanceLayout } from "../storage/index.js";
import { readJson } from "./json-read.js";
import type { TaskHistory } from "./task-history.js";
import type { TaskRecordInit } from "./task-record.js";

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** What a process leaves in a task's folder besides the task itself: a claim, scratch, its shown seqs. */
const SCRATCH = new Set(["owner.lock", "tmp", "seqs-shown"]);
/** A shell younger than this may be a task being created right now (its folder made, its claim not yet). */
const SHELL_GRACE_MS = 60_000;

/**
 * Gives every task folder without a history row one: from its task_metadata.json (status
 * interrupted), or listed as damaged, except those `leaveAlone` names (e.g. claimed by a live
 * process: being created or deleted right now); rows that appear meanwhile are not overwritten.
 * A folder that holds nothing but scratch is no task (a deleted task's folder that a late write
 * of an older version made again): it gets no row, and is removed once past a grace period.
 */
export function indexOrphanFolders(
  layout: InstanceLayout,
  history: TaskHistory,
  logger: Logger,
  /** Folders to leave alone (claimed by a live process, or recovered by their own owner). */
  leaveAlone: (taskId: string) => boolean = () => false,
): string[] {
  let names: string[];
  try {
    names = fs
      .readdirSync(layout.tasksDir, { withFileTypes: true })
      // `<file>.lock` folders belong to cross-process locks (proper-lockfile), not to tasks.
      .filter((d) => d.isDirectory() && ID.test(d.name) && !d.name.includes("..") && !d.name.endsWith(".lock"))
      .map((d) => d.name);
  } catch {
    return [];
  }
  const rows: TaskRecordInit[] = [];
  const indexed = history.ids();
  for (const id of names) {
    if (indexed.has(id) || leaveAlone(id)) continue;
    const task = layout.task(id);
    const shell = shellAge(task.dir);
    if (shell !== undefined) {
      if (shell > SHELL_GRACE_MS) {
        fs.rmSync(task.dir, { recursive: true, force: true });
        logger.info("removed a task folder that held no task", { taskId: id });
      }
      continue;
    }
    const meta = readJson<Record<string, unknown>>(task.metadataJson);
    let createdAt: number;
    try {
      createdAt = fs.statSync(task.dir).mtimeMs;
    } catch {
      continue;
    }
    if (meta.ok && typeof meta.value === "object" && meta.value !== null) {
      const m = meta.value;
      rows.push({
        id,
        title: typeof m.title === "string" ? m.title : "",
        workspaceRoot: typeof m.workspaceRoot === "string" ? m.workspaceRoot : "",
        createdAt: typeof m.createdAt === "number" ? m.createdAt : Math.floor(createdAt),
        updatedAt: Math.floor(createdAt),
        source: typeof m.source === "string" ? m.source : "dline",
        status: "interrupted",
      });
    } else {
      rows.push({
        id,
        createdAt: Math.floor(createdAt),
        updatedAt: Math.floor(createdAt),
        status: "damaged",
        damagedReason:
          meta.ok || meta.missing
            ? "its history row was lost and task_metadata.json is missing"
            : `task_metadata.json ${meta.reason}`,
      });
    }
  }
  const added = rows.length ? history.putManyIfAbsent(rows) : [];
  if (added.length) logger.warn("indexed task folders that had no history row", { count: added.length });
  return added;
}

/**
 * How long ago a folder holding scratch and nothing else last changed; undefined for any other
 * folder (an empty one too: it is listed as damaged, as a task whose files were lost).
 */
function shellAge(dir: string): number | undefined {
  try {
    const names = fs.readdirSync(dir);
    if (names.length === 0 || !names.every((name) => SCRATCH.has(name))) return undefined;
    return Date.now() - fs.statSync(dir).mtimeMs;
  } catch {
    return undefined;
  }
}
