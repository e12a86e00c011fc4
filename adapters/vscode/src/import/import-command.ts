import * as vscode from "vscode";
import type { ImportClineResponse } from "../../../../core/src/gen/dline/v1/import_pb.js";
import type { SidecarSupervisor } from "../sidecar/sidecar-supervisor.js";
import type { Log } from "../sidecar/log.js";
import { importPickRows, importResultLines, importSummary, outcomeWord, type ImportPickRow } from "./import-mapping.js";
import { visibleLine } from "../text/visible-text.js";

interface RowItem extends vscode.QuickPickItem {
  row?: ImportPickRow;
}

/**
 * "Dline: Import from Cline": DiscoverCline, a multi-select pick of the importable items
 * (skipped ones are shown with their reason and cannot be checked), a dry run to confirm, then
 * ImportCline. Results go to the output channel and a summary notification. Returns the
 * import's response (undefined when cancelled).
 */
export async function importFromCline(
  supervisor: SidecarSupervisor,
  log: Log,
  showLog: () => void,
  onImported: () => void,
): Promise<ImportClineResponse | undefined> {
  const { clients } = await supervisor.ready();
  const discovered = await clients.imports.discoverCline({});
  const rows = importPickRows(discovered.items);
  const importable = rows.filter((r) => r.selectable);
  const skipped = rows.filter((r) => !r.selectable);
  for (const r of skipped) log.info(`import from Cline: skipped ${r.label} (${r.sourceKey}): ${r.detail}`);
  if (importable.length === 0) {
    const where = discovered.rootsSearched.join(", ");
    void vscode.window.showInformationMessage(
      skipped.length > 0
        ? `Dline: nothing to import from Cline (${skipped.length} skipped; see the Dline output).`
        : `Dline: no Cline tasks found (searched ${where || "nowhere"}).`,
    );
    return undefined;
  }

  const chosen = await pickItems(importable, skipped);
  if (!chosen || chosen.length === 0) return undefined;

  const dry = await clients.imports.importCline({ sourceKeys: chosen, dryRun: true });
  for (const line of importResultLines(dry.results, true)) log.info(`import from Cline: ${line}`);
  if (!dry.results.some((r) => r.outcome === "would_import")) {
    void vscode.window.showInformationMessage(
      `Dline: nothing new to import from Cline (${importSummary(dry.results, true)}).`,
    );
    return undefined;
  }
  if (!(await confirmDryRun(dry))) return undefined;

  const done = await clients.imports.importCline({ sourceKeys: chosen });
  for (const line of importResultLines(done.results, false)) log.info(`import from Cline: ${line}`);
  onImported();
  const summary = importSummary(done.results, false);
  const failed = done.results.some((r) => r.outcome === "failed");
  const message = `Dline: import from Cline: ${summary}.`;
  const shown = failed
    ? vscode.window.showWarningMessage(message, "Show Log")
    : vscode.window.showInformationMessage(message, "Show Log");
  void shown.then((choice) => {
    if (choice === "Show Log") showLog();
  });
  return done;
}

/** The multi-select pick; resolves with the chosen source keys, or undefined when dismissed. */
function pickItems(importable: ImportPickRow[], skipped: ImportPickRow[]): Promise<string[] | undefined> {
  const toItem = (row: ImportPickRow): RowItem => ({
    label: row.selectable ? row.label : `$(circle-slash) ${row.label}`,
    description: row.description,
    detail: row.detail,
    row,
  });
  const pick = vscode.window.createQuickPick<RowItem>();
  pick.title = "Dline: Import from Cline";
  pick.placeholder = `Choose the Cline tasks to import (${importable.length} importable${skipped.length ? `, ${skipped.length} skipped` : ""})`;
  pick.canSelectMany = true;
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  pick.items = [
    ...importable.map(toItem),
    ...(skipped.length > 0
      ? [{ label: "Skipped (cannot be imported)", kind: vscode.QuickPickItemKind.Separator } as RowItem]
      : []),
    ...skipped.map(toItem),
  ];
  return new Promise((resolve) => {
    let accepted: string[] | undefined;
    pick.onDidChangeSelection((selection) => {
      // A skipped item cannot be chosen: uncheck it as soon as it is checked.
      if (selection.some((i) => i.row && !i.row.selectable))
        pick.selectedItems = selection.filter((i) => i.row?.selectable);
    });
    pick.onDidAccept(() => {
      accepted = pick.selectedItems.flatMap((i) => (i.row?.selectable ? [i.row.sourceKey] : []));
      pick.hide();
    });
    pick.onDidHide(() => {
      pick.dispose();
      resolve(accepted);
    });
    pick.show();
  });
}

/** Shows the dry run (what would be imported, what would not be carried over); true to go on. */
function confirmDryRun(dry: ImportClineResponse): Promise<boolean> {
  const going = dry.results.filter((r) => r.outcome === "would_import").length;
  const IMPORT: vscode.QuickPickItem = {
    label: `$(cloud-download) Import ${going} task${going === 1 ? "" : "s"}`,
    detail: importSummary(dry.results, true),
  };
  const CANCEL: vscode.QuickPickItem = { label: "$(close) Cancel" };
  const info: vscode.QuickPickItem[] = dry.results.map((r) => ({
    label: visibleLine(r.title || r.sourceKey),
    description: outcomeWord(r.outcome),
    detail:
      [r.error, r.notCarriedOver.length > 0 ? `Not carried over: ${r.notCarriedOver.join(", ")}` : ""]
        .filter(Boolean)
        .join(" · ") || undefined,
  }));
  const pick = vscode.window.createQuickPick();
  pick.title = "Dline: Import from Cline — dry run";
  pick.placeholder = "Nothing has been written yet. Import?";
  pick.items = [IMPORT, CANCEL, { label: "Dry run", kind: vscode.QuickPickItemKind.Separator }, ...info];
  return new Promise((resolve) => {
    let go = false;
    pick.onDidAccept(() => {
      const chosen = pick.selectedItems[0];
      // The dry run's rows are information only: accepting one keeps the pick open.
      if (chosen !== IMPORT && chosen !== CANCEL) return;
      go = chosen === IMPORT;
      pick.hide();
    });
    pick.onDidHide(() => {
      pick.dispose();
      resolve(go);
    });
    pick.show();
  });
}
