import type { ParsedSession } from "./cline-session.js";
import { emptyUsage, type ParsedClineItem, type UsageTotals } from "./import-types.js";

/**
 * A legacy task that Cline 4 continued as a session with the same id, as one task, the way
 * Cline shows it: the legacy task's messages, then the session's own turns (those after the
 * notice Cline 4 appends to the legacy conversation). The usage is the legacy task's requests
 * plus the session's own: the session's copy of the legacy conversation carries the legacy
 * totals on one message, which would count them twice. The conversation the model continues
 * from is the session's (Cline 4 already cut it as Cline would have sent it). The task keeps
 * the session's identity, workspace and status.
 */
export function mergeMigratedTask(legacy: ParsedClineItem, session: ParsedSession): ParsedClineItem {
  const part = session.legacyPart ?? { messages: 0, requests: 0 };
  const ownMessages = session.messages.slice(part.messages);
  const ownRequests = session.requests.slice(part.requests);
  const requests = [...legacy.requests, ...ownRequests];
  const usage = requests.reduce<UsageTotals>((u, r) => {
    u.tokensIn += r.metrics.tokensIn;
    u.tokensOut += r.metrics.tokensOut;
    u.cacheReads += r.metrics.cacheReads;
    u.cacheWrites += r.metrics.cacheWrites;
    u.cost += r.metrics.cost;
    return u;
  }, emptyUsage());
  const messages = [...legacy.messages, ...ownMessages];
  const workspaceRoot = session.item.workspaceRoot || legacy.item.workspaceRoot;
  const notes = [
    ...new Set(
      [...legacy.notCarriedOver, ...session.notCarriedOver].filter(
        (n) => !(workspaceRoot && n.startsWith("workspace:")),
      ),
    ),
  ];
  return {
    item: {
      ...session.item,
      title: session.item.title || legacy.item.title,
      startedAt: Math.min(...[legacy.item.startedAt, session.item.startedAt].filter((t) => t > 0)) || 0,
      updatedAt: Math.max(legacy.item.updatedAt, session.item.updatedAt),
      workspaceRoot,
      workspaceNote: workspaceRoot ? "" : session.item.workspaceNote,
      models: [...new Set([...legacy.item.models, ...session.item.models])],
      messageCount: messages.length,
      usage,
    },
    taskText: legacy.taskText || session.taskText,
    status: session.status,
    favorite: session.favorite || legacy.favorite,
    messages,
    conversation: session.conversation,
    requests,
    notCarriedOver: notes,
    detail: `with ${legacy.item.sourceKey}, which Cline 4 continued as this session: one task, the legacy messages then the session's`,
    metadata: {
      ...legacy.metadata,
      ...session.metadata,
      migratedFromLegacy: { sourceKey: legacy.item.sourceKey, path: legacy.item.path },
    },
  };
}
