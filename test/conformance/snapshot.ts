/**
 * A normalised snapshot of what a client left: workspace files, the rows of taskHistory.db and
 * of each task's messages.db and journal.db, and the trees of the checkpoint commits. Ids,
 * times and machine-specific paths are replaced by placeholders so that two runs of the same
 * scenario through different clients compare equal.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import Database from "better-sqlite3";

export interface Snapshot {
  files: Record<string, string>;
  taskHistory: Record<string, unknown[]>;
  tasks: { messages: Record<string, unknown[]>; journal: Record<string, unknown[]> }[];
  checkpointTrees: string[];
}

/** Columns whose values differ from run to run by nature (ids, times, sizes on disk). */
const VOLATILE_COLUMNS = new Set([
  "id",
  "task_id",
  "time",
  "at",
  "created_at",
  "updated_at",
  "checkpoint_id",
  "ask_id",
  "payload_id",
  "size_bytes",
]);

export interface SnapshotRoots {
  workspace: string;
  dataRoot: string;
  documentsRoot: string;
  /** Other paths to replace by a placeholder (temp folders, roots). */
  replace: Record<string, string>;
}

function normaliseText(text: string, roots: SnapshotRoots): string {
  let out = text;
  for (const [from, to] of Object.entries({ [roots.workspace]: "<workspace>", ...roots.replace })) {
    out = out.split(from).join(to);
  }
  return out
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "<uuid>")
    .replace(/\b[0-9a-f]{40}\b/g, "<sha>")
    .replace(/\b1[6-9]\d{11}\b/g, "<ms>")
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g, "<iso-time>");
}

function normaliseValue(value: unknown, roots: SnapshotRoots): unknown {
  if (typeof value === "string") return normaliseText(value, roots);
  if (Buffer.isBuffer(value)) return normaliseText(value.toString("utf8"), roots);
  return value;
}

function dumpDb(file: string, roots: SnapshotRoots): Record<string, unknown[]> {
  if (!fs.existsSync(file)) return {};
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .all() as { name: string }[];
    const out: Record<string, unknown[]> = {};
    for (const { name } of tables) {
      const rows = db.prepare(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[];
      out[name] = rows.map((row) => {
        const kept: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(row)) if (!VOLATILE_COLUMNS.has(k)) kept[k] = normaliseValue(v, roots);
        return kept;
      });
    }
    return out;
  } finally {
    db.close();
  }
}

function walk(dir: string, base = dir, out: Record<string, string> = {}): Record<string, string> {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === ".git") continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, base, out);
    else out[path.relative(base, full)] = fs.readFileSync(full, "utf8");
  }
  return out;
}

function checkpointTrees(documentsRoot: string): string[] {
  const root = path.join(documentsRoot, "checkpoints");
  if (!fs.existsSync(root)) return [];
  const trees: string[] = [];
  for (const entry of fs.readdirSync(root)) {
    const gitDir = path.join(root, entry, ".git");
    if (!fs.existsSync(gitDir)) continue;
    const git = (...args: string[]) => execFileSync("git", ["--git-dir", gitDir, ...args], { encoding: "utf8" });
    let ids: string[];
    try {
      ids = git("rev-list", "--all").split("\n").filter(Boolean);
    } catch {
      continue; // no commits yet
    }
    for (const commit of ids) {
      const tree = git("rev-parse", `${commit}^{tree}`).trim();
      trees.push(git("ls-tree", "-r", "--full-tree", tree).trim());
    }
  }
  // A set of trees: commit order by time is not comparable across runs, the contents are.
  return [...new Set(trees)].sort();
}

export function takeSnapshot(roots: SnapshotRoots): Snapshot {
  // Tasks live under the documents root (InstanceLayout.tasksDir).
  const tasksDir = path.join(roots.documentsRoot, "tasks");
  const tasks: Snapshot["tasks"] = [];
  if (fs.existsSync(tasksDir)) {
    for (const entry of fs.readdirSync(tasksDir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const dir = path.join(tasksDir, entry.name);
      if (!fs.existsSync(path.join(dir, "messages.db"))) continue;
      tasks.push({
        messages: dumpDb(path.join(dir, "messages.db"), roots),
        journal: dumpDb(path.join(dir, "journal.db"), roots),
      });
    }
  }
  return {
    files: walk(roots.workspace),
    taskHistory: dumpDb(path.join(tasksDir, "taskHistory.db"), roots),
    tasks,
    checkpointTrees: checkpointTrees(roots.documentsRoot),
  };
}
