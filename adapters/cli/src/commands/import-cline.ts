import { toJson } from "@bufbuild/protobuf";
import {
  ImportItemKind,
  ImportItemSchema,
  ImportResultSchema,
  type ImportItem,
} from "../../../../core/src/gen/dline/v1/import_pb.js";
import { checkFlags, UsageError, type ParsedArgs } from "../args.js";
import { printJson, withSidecar, type CliContext } from "../session.js";

function kindName(kind: ImportItemKind): string {
  return kind === ImportItemKind.SESSION ? "session" : "legacy";
}

function describe(item: ImportItem): string {
  const when =
    item.createdAt > 0n
      ? new Date(Number(item.createdAt)).toISOString().slice(0, 16).replace("T", " ")
      : "unknown date    ";
  const where = item.workspaceRoot || "(no workspace)";
  const tail = item.skippedReason
    ? `skipped: ${item.skippedReason}`
    : item.importedTaskId
      ? `imported as ${item.importedTaskId}`
      : where;
  return `${kindName(item.kind).padEnd(7)} ${item.sourceKey}  ${when}  ${item.title.slice(0, 60)}\n          ${tail}\n`;
}

export const IMPORT_CLINE_HELP = `Usage: dline [--json] import-cline [--dry-run] [--all | SOURCE_KEY...]

Imports tasks from Cline, read-only: nothing under Cline's folders is written.

Arguments:
  SOURCE_KEY...        the items to import, as listed (legacy:<id>, session:<id>)
Options:
  --all                import every item that can be imported
  --dry-run            say what an import would do, write nothing
  --json               machine-readable output

Examples:
  dline import-cline                      list the Cline tasks and sessions found, with their source keys
  dline import-cline --all                import every one that can be imported
  dline import-cline SOURCE_KEY...        import these (keys as listed: legacy:<id>, session:<id>)
  dline import-cline --dry-run --all      say what an import would do, write nothing

Importing again changes nothing for items whose source did not change; an item that went on
in Cline since its import is refreshed, unless it was continued in Dline (then it is left as
it is). A task imported without a workspace asks for one when continued:
dline resume TASK_ID --workspace DIR.

Where it looks: the globalStorage of the Cline extension in VS Code, VS Code Insiders and
VSCodium, ~/.cline/data, and Cline 4's sessions ($CLINE_SESSION_DATA_DIR, $CLINE_DATA_DIR,
$CLINE_DIR/data). Exit code 1 when an item failed.
`;

/**
 * `dline import-cline [--dry-run] [--json] [--all | SOURCE_KEY...]`: without a selection it
 * lists what the discovery found; with `--all` or source keys it imports (or, with --dry-run,
 * reports what an import would do). Exit code 1 when an item failed.
 */
export async function importClineCommand(ctx: CliContext, args: ParsedArgs): Promise<number> {
  checkFlags(args, ["dry-run", "all"]);
  const all = args.flags.has("all");
  const dryRun = args.flags.has("dry-run");
  if (all && args.positionals.length > 0)
    throw new UsageError("dline import-cline takes --all or source keys, not both.");
  return withSidecar(ctx, async (clients) => {
    if (!all && args.positionals.length === 0) {
      const found = await clients.imports.discoverCline({});
      if (ctx.json) {
        printJson(ctx, {
          items: found.items.map((i) => toJson(ImportItemSchema, i)),
          rootsSearched: found.rootsSearched,
        });
        return 0;
      }
      for (const item of found.items) ctx.out.write(describe(item));
      const importable = found.items.filter((i) => !i.skippedReason && !i.importedTaskId).length;
      ctx.out.write(
        `${found.items.length} item(s) found, ${importable} not imported yet; import them with: dline import-cline --all\n`,
      );
      return 0;
    }
    const res = await clients.imports.importCline({ all, sourceKeys: args.positionals, dryRun });
    const failed = res.results.filter((r) => r.outcome === "failed").length;
    if (ctx.json) {
      printJson(ctx, { dryRun: res.dryRun, results: res.results.map((r) => toJson(ImportResultSchema, r)) });
      return failed ? 1 : 0;
    }
    const counts = new Map<string, number>();
    for (const r of res.results) {
      counts.set(r.outcome, (counts.get(r.outcome) ?? 0) + 1);
      const error = r.errorCode === "unknown_source_key" ? `${r.error}; list them with: dline import-cline` : r.error;
      const said = [r.detail, error].filter(Boolean).join("; ");
      ctx.out.write(
        `${r.outcome.padEnd(16)} ${r.sourceKey}${r.taskId ? ` -> ${r.taskId}` : ""}${said ? `: ${said}` : ""}\n`,
      );
      for (const note of r.notCarriedOver) ctx.out.write(`                 not carried over: ${note}\n`);
    }
    ctx.out.write(
      `${dryRun ? "dry run (nothing written): " : ""}${[...counts].map(([k, n]) => `${n} ${k}`).join(", ") || "nothing to import"}\n`,
    );
    return failed ? 1 : 0;
  });
}
