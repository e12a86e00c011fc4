import * as fs from "node:fs";
import * as path from "node:path";
import type { ClineRoots } from "./cline-roots.js";
import { importedElsewhere, parseSession, sessionMessagesFile, sessionStub, subagentItems } from "./cline-session.js";
import { emptyUsage, MalformedClineFile, type ClineItem, type ClineItemKind, type ParsedClineItem } from "./import-types.js";
import { parseLegacyTask } from "./legacy-task.js";
import { isDirectory, listDir, statOrUndefined } from "./read-only-files.js";
import { importedTaskId, legacySourceKey, sessionSourceKey } from "./source-keys.js";

/**
 * One thing found under a Cline root, before its files are parsed. Listing candidates only
 * lists folders and stats files, so it stays fast for thousands of tasks; parsing happens one
 * item at a time (memory stays bounded by the largest item, not the sum).
 */
export interface Candidate {
  sourceKey: string;
  kind: ClineItemKind;
  /** Task id or session id, as Cline names the folder. */
  sourceId: string;
  root: string;
  dir: string;
  /** Set when the candidate is listed but never imported (duplicate, subagent file...). */
  decided?: ClineItem;
}

export interface CandidateList {
  candidates: Candidate[];
  rootsSearched: string[];
}

function realOrSelf(dir: string): string {
  try {
    return fs.realpathSync(dir);
  } catch {
    return dir;
  }
}

function legacyCandidates(roots: ClineRoots, searched: string[]): Candidate[] {
  const found: { taskId: string; root: string; label: string; dir: string; mtime: number; order: number }[] = [];
  const seenRoots = new Set<string>();
  roots.legacyRoots.forEach(({ label, dir: root }, order) => {
    const tasksDir = path.join(root, "tasks");
    searched.push(tasksDir);
    const real = realOrSelf(tasksDir);
    if (seenRoots.has(real) || !isDirectory(tasksDir)) return;
    seenRoots.add(real);
    for (const entry of listDir(tasksDir)) {
      if (!entry.isDirectory()) continue;
      const dir = path.join(tasksDir, entry.name);
      // A task counts only when it has ui_messages.json.
      const ui = statOrUndefined(path.join(dir, "ui_messages.json"));
      if (!ui?.isFile()) continue;
      found.push({ taskId: entry.name, root, label, dir, mtime: ui.mtimeMs, order });
    }
  });
  const byId = new Map<string, typeof found>();
  for (const f of found) {
    const list = byId.get(f.taskId) ?? [];
    list.push(f);
    byId.set(f.taskId, list);
  }
  const out: Candidate[] = [];
  for (const [taskId, copies] of byId) {
    // The newest ui_messages.json wins; equal times keep the root order (VS Code variants first).
    copies.sort((a, b) => b.mtime - a.mtime || a.order - b.order);
    const [winner, ...others] = copies;
    out.push({ sourceKey: legacySourceKey(taskId), kind: "legacy_task", sourceId: taskId, root: winner.root, dir: winner.dir });
    for (const dup of others) {
      out.push({
        sourceKey: `${legacySourceKey(taskId)}@${dup.label}`,
        kind: "legacy_task",
        sourceId: taskId,
        root: dup.root,
        dir: dup.dir,
        decided: {
          ...blankItem(`${legacySourceKey(taskId)}@${dup.label}`, "legacy_task", dup.root, dup.dir),
          title: `Cline task ${taskId}`,
          updatedAt: Math.round(dup.mtime),
          skip: { code: "duplicate", reason: `duplicate of ${winner.dir}, whose ui_messages.json is newer` },
        },
      });
    }
  }
  return out;
}

function sessionCandidates(roots: ClineRoots, searched: string[]): Candidate[] {
  searched.push(roots.sessionsDir);
  const out: Candidate[] = [];
  const entries = listDir(roots.sessionsDir)
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  for (const sessionId of entries) {
    // Keyed by the full folder name: ids started in the same millisecond share a prefix.
    const dir = path.join(roots.sessionsDir, sessionId);
    const base: Candidate = { sourceKey: sessionSourceKey(sessionId), kind: "session", sourceId: sessionId, root: roots.sessionsDir, dir };
    if (!statOrUndefined(sessionMessagesFile(dir, sessionId))?.isFile()) {
      const { item } = sessionStub(dir, sessionId, roots);
      out.push({ ...base, decided: { ...item, skip: { code: "no_messages", reason: `no ${sessionId}.messages.json in the session folder` } } });
    } else {
      const { item, manifest } = sessionStub(dir, sessionId, roots);
      const elsewhere = importedElsewhere(manifest);
      out.push(elsewhere ? { ...base, decided: { ...item, skip: { code: "imported_elsewhere", reason: `${elsewhere}: that tool owns the conversation` } } } : base);
    }
    for (const sub of subagentItems(dir, sessionId, roots.sessionsDir)) {
      out.push({ sourceKey: sub.sourceKey, kind: "session", sourceId: sessionId, root: roots.sessionsDir, dir: sub.path, decided: sub });
    }
  }
  return out;
}

function blankItem(sourceKey: string, kind: ClineItemKind, root: string, dir: string): ClineItem {
  return {
    sourceKey,
    kind,
    root,
    path: dir,
    taskId: "",
    title: "",
    startedAt: 0,
    updatedAt: 0,
    workspaceRoot: "",
    workspaceNote: "",
    models: [],
    messageCount: 0,
    usage: emptyUsage(),
  };
}

/** Every legacy task and session under the Cline roots (no file is parsed yet). */
export function listCandidates(roots: ClineRoots): CandidateList {
  const rootsSearched: string[] = [];
  const candidates = [...legacyCandidates(roots, rootsSearched), ...sessionCandidates(roots, rootsSearched)];
  return { candidates, rootsSearched };
}

/** Parses a candidate's files; throws MalformedClineFile. */
export function parseCandidate(c: Candidate, roots: ClineRoots): ParsedClineItem {
  return c.kind === "legacy_task" ? parseLegacyTask(c.dir, c.sourceId, c.root) : parseSession(c.dir, c.sourceId, roots);
}

/** What discovery reports for a candidate: its summary, or why it is not importable. */
export function describeCandidate(c: Candidate, roots: ClineRoots): { item: ClineItem; parsed?: ParsedClineItem } {
  if (c.decided) return { item: c.decided };
  try {
    const parsed = parseCandidate(c, roots);
    return { item: parsed.item, parsed };
  } catch (err) {
    if (!(err instanceof MalformedClineFile)) throw err;
    const stub = c.kind === "session" ? sessionStub(c.dir, c.sourceId, roots).item : blankItem(c.sourceKey, c.kind, c.root, c.dir);
    return {
      item: {
        ...stub,
        taskId: importedTaskId(c.kind, c.sourceId),
        title: stub.title || `Cline task ${c.sourceId}`,
        skip: { code: "malformed", reason: `malformed file: ${err.message}` },
      },
    };
  }
}
