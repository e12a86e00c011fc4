import { ImportItemKind, type ImportItem, type ImportResult } from "../../../../core/src/gen/dline/v1/import_pb.js";
import { visibleLine } from "../text/visible-text.js";

/** One row of the "Import from Cline" pick: skipped items are listed but cannot be chosen. */
export interface ImportPickRow {
  sourceKey: string;
  label: string;
  description: string;
  detail: string;
  selectable: boolean;
}

export function kindWord(kind: ImportItemKind): string {
  if (kind === ImportItemKind.LEGACY_TASK) return "Cline task";
  if (kind === ImportItemKind.SESSION) return "Cline session";
  return "Cline item";
}

/** Importable items first (newest first), then the skipped ones with their reason. */
export function importPickRows(items: readonly ImportItem[]): ImportPickRow[] {
  const rows = items.map((item): ImportPickRow & { at: number } => {
    const selectable = !item.skippedReason;
    const where = item.workspaceRoot || item.workspaceNote || "";
    const description = [kindWord(item.kind), where, item.importedTaskId ? "already imported" : ""]
      .filter(Boolean)
      .join(" · ");
    const facts = [
      `${item.messageCount} message${item.messageCount === 1n ? "" : "s"}`,
      item.models.length > 0 ? item.models.join(", ") : "",
      item.createdAt > 0n ? new Date(Number(item.createdAt)).toISOString().slice(0, 10) : "",
    ].filter(Boolean);
    return {
      sourceKey: item.sourceKey,
      label: visibleLine(item.title || "(untitled)"),
      description,
      detail: selectable ? facts.join(" · ") : `Skipped: ${item.skippedReason}`,
      selectable,
      at: Number(item.updatedAt || item.createdAt),
    };
  });
  rows.sort((a, b) => Number(b.selectable) - Number(a.selectable) || b.at - a.at);
  return rows.map(({ at: _at, ...row }) => row);
}

/** The core's outcome codes in words. */
export function outcomeWord(outcome: string): string {
  switch (outcome) {
    case "imported":
      return "imported";
    case "would_import":
      return "would be imported";
    case "already_imported":
      return "already imported";
    case "skipped":
      return "skipped";
    case "failed":
      return "failed";
    default:
      return outcome || "unknown outcome";
  }
}

/** One line per result for the output channel. */
export function importResultLines(results: readonly ImportResult[], dryRun: boolean): string[] {
  return results.map((r) => {
    const parts = [
      `${dryRun ? "[dry run] " : ""}${r.title || r.sourceKey} (${r.sourceKey}): ${outcomeWord(r.outcome)}`,
    ];
    if (r.taskId) parts.push(`task ${r.taskId}`);
    if (r.error) parts.push(`error: ${r.error}`);
    if (r.notCarriedOver.length > 0) parts.push(`not carried over: ${r.notCarriedOver.join(", ")}`);
    return parts.join("; ");
  });
}

/** Counts by outcome, e.g. "1 imported, 1 already imported, 0 failed". */
export function importSummary(results: readonly ImportResult[], dryRun: boolean): string {
  const count = (outcome: string) => results.filter((r) => r.outcome === outcome).length;
  const main = dryRun ? `${count("would_import")} would be imported` : `${count("imported")} imported`;
  const parts = [main, `${count("already_imported")} already imported`];
  if (count("skipped") > 0) parts.push(`${count("skipped")} skipped`);
  parts.push(`${count("failed")} failed`);
  const lost = results.filter((r) => r.notCarriedOver.length > 0).length;
  if (lost > 0) parts.push(`${lost} with parts not carried over`);
  return parts.join(", ");
}
