import * as fs from "node:fs";
import * as path from "node:path";
import type { ClineRoots } from "./cline-roots.js";
import { parseSession } from "./cline-session.js";
import {
  emptyUsage,
  MalformedClineFile,
  type ClineItem,
  type ClineItemKind,
  type ParsedClineItem,
} from "./import-types.js";
import { legacyHistoryIndex, type LegacyHistoryIndex } from "./legacy-task-history.js";
import { LEGACY_UI_FILES, legacyUiFile, parseLegacyTask } from "./legacy-task.js";
import { mergeMigratedTask } from "./migrated-task.js";
import { isDirectory, listDir, statOrUndefined } from "./read-only-files.js";
import {
  continuesLegacyTask,
  datedSubagentItem,
  importedElsewhere,
  sessionMessagesFile,
  sessionStart,
  sessionStub,
  subagentItems,
} from "./session-manifest.js";
import { importedTaskId, legacySourceKey, sessionSourceKey } from "./source-keys.js";

/**
 * One thing found under a Cline root, before its files are parsed. Listing candidates only
 * lists folders and stats files (and reads session manifests), so it stays fast for thousands
 * of tasks; parsing happens one item at a time (memory stays bounded by the largest item, not
 * the sum).
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
  /** A session that Cline 4 resumed from this legacy task (same id): imported together. */
  legacyPartner?: { dir: string; root: string };
  /** A subagent or teammate messages file (dated from its own messages when described). */
  subagentFile?: boolean;
  /** The session's manifest says Cline 4 resumed it from the legacy task of the same id. */
  resumesLegacyTask?: boolean;
}

export interface CandidateList {
  candidates: Candidate[];
  rootsSearched: string[];
}

/** What one discovery or import reads once and shares between items (the roots' task histories). */
export interface DiscoveryContext {
  roots: ClineRoots;
  history: LegacyHistoryIndex;
}

export function discoveryContext(roots: ClineRoots): DiscoveryContext {
  return { roots, history: legacyHistoryIndex() };
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
      // A task counts when it has its UI messages (ui_messages.json, or an older claude_messages.json).
      const ui = legacyUiFile(dir);
      if (!ui) continue;
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
    // The newest UI messages file wins; equal times keep the root order (VS Code variants first).
    copies.sort((a, b) => b.mtime - a.mtime || a.order - b.order);
    const [winner, ...others] = copies;
    if (!winner) continue;
    out.push({
      sourceKey: legacySourceKey(taskId),
      kind: "legacy_task",
      sourceId: taskId,
      root: winner.root,
      dir: winner.dir,
    });
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
          skip: { code: "duplicate", reason: `duplicate of ${winner.dir}, whose UI messages file is newer` },
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
    const base: Candidate = {
      sourceKey: sessionSourceKey(sessionId),
      kind: "session",
      sourceId: sessionId,
      root: roots.sessionsDir,
      dir,
    };
    const { item, manifest } = sessionStub(dir, sessionId, roots);
    if (!statOrUndefined(sessionMessagesFile(dir, sessionId))?.isFile()) {
      out.push({
        ...base,
        decided: {
          ...item,
          skip: { code: "no_messages", reason: `no ${sessionId}.messages.json in the session folder` },
        },
      });
    } else {
      const elsewhere = importedElsewhere(manifest);
      out.push(
        elsewhere
          ? {
              ...base,
              decided: {
                ...item,
                skip: { code: "imported_elsewhere", reason: `${elsewhere}: that tool owns the conversation` },
              },
            }
          : { ...base, resumesLegacyTask: continuesLegacyTask(manifest) },
      );
    }
    for (const sub of subagentItems(dir, sessionId, roots.sessionsDir, sessionStart(manifest, sessionId))) {
      out.push({
        sourceKey: sub.sourceKey,
        kind: "session",
        sourceId: sessionId,
        root: roots.sessionsDir,
        dir: sub.path,
        decided: sub,
        subagentFile: true,
      });
    }
  }
  return out;
}

/**
 * Pairs each importable session that Cline 4 resumed from a legacy task (its manifest says so)
 * with that task, and lists the legacy task as migrated: Cline shows only the session, and
 * importing both would count the legacy usage twice.
 */
function pairMigrations(candidates: Candidate[]): void {
  const legacyById = new Map(
    candidates.filter((c) => c.kind === "legacy_task" && !c.decided).map((c) => [c.sourceId, c]),
  );
  for (const session of candidates) {
    if (!session.resumesLegacyTask) continue;
    const legacy = legacyById.get(session.sourceId);
    if (!legacy) continue;
    session.legacyPartner = { dir: legacy.dir, root: legacy.root };
    legacy.decided = {
      ...blankItem(legacy.sourceKey, "legacy_task", legacy.root, legacy.dir),
      title: `Cline task ${legacy.sourceId}`,
      skip: {
        code: "migrated",
        reason: `Cline 4 continued this task as session ${session.sourceId}: imported with it, as one task (${session.sourceKey})`,
      },
    };
  }
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

/** Every legacy task and session under the Cline roots (no messages file is parsed yet). */
export function listCandidates(roots: ClineRoots): CandidateList {
  const rootsSearched: string[] = [];
  const candidates = [...legacyCandidates(roots, rootsSearched), ...sessionCandidates(roots, rootsSearched)];
  pairMigrations(candidates);
  return { candidates, rootsSearched };
}

/** Parses a candidate's files; throws MalformedClineFile. */
export function parseCandidate(c: Candidate, ctx: DiscoveryContext): ParsedClineItem {
  if (c.kind === "legacy_task") return parseLegacyTask(c.dir, c.sourceId, c.root, ctx.history);
  const session = parseSession(c.dir, c.sourceId, ctx.roots);
  if (!c.legacyPartner) return session;
  if (!session.legacyPart) {
    session.notCarriedOver.push(
      "Cline 4 resumed a legacy task as this session, but the session does not hold its conversation: imported from the session alone",
    );
    return session;
  }
  try {
    return mergeMigratedTask(
      parseLegacyTask(c.legacyPartner.dir, c.sourceId, c.legacyPartner.root, ctx.history),
      session,
    );
  } catch (err) {
    if (!(err instanceof MalformedClineFile)) throw err;
    session.notCarriedOver.push(
      `the legacy task this session continues could not be read (${err.message}): imported from the session alone`,
    );
    return session;
  }
}

/** The files an item is read from, and the other facts it depends on: what the import records of its source. */
export function candidateSources(c: Candidate, ctx: DiscoveryContext): { files: string[]; facts: string[] } {
  const legacy = (dir: string, root: string) => {
    const { entry, problem } = ctx.history.entry(root, c.sourceId);
    return {
      files: [...LEGACY_UI_FILES, "api_conversation_history.json", "context_history.json", "task_metadata.json"].map(
        (n) => path.join(dir, n),
      ),
      facts: [entry?.fingerprint ?? `no entry: ${problem ?? ""}`],
    };
  };
  if (c.kind === "legacy_task") return legacy(c.dir, c.root);
  const session = {
    files: [path.join(c.dir, `${c.sourceId}.json`), sessionMessagesFile(c.dir, c.sourceId)],
    facts: [] as string[],
  };
  if (!c.legacyPartner) return session;
  const partner = legacy(c.legacyPartner.dir, c.legacyPartner.root);
  return { files: [...session.files, ...partner.files], facts: partner.facts };
}

/** What discovery reports for a candidate: its summary, or why it is not importable. */
export function describeCandidate(c: Candidate, ctx: DiscoveryContext): { item: ClineItem; parsed?: ParsedClineItem } {
  if (c.decided) return { item: c.subagentFile ? datedSubagentItem(c.decided) : c.decided };
  try {
    const parsed = parseCandidate(c, ctx);
    return { item: parsed.item, parsed };
  } catch (err) {
    if (!(err instanceof MalformedClineFile)) throw err;
    const stub =
      c.kind === "session"
        ? sessionStub(c.dir, c.sourceId, ctx.roots).item
        : blankItem(c.sourceKey, c.kind, c.root, c.dir);
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
