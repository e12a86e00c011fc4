import * as vscode from "vscode";
import type { SidecarSupervisor } from "../sidecar/sidecar-supervisor.js";
import type { Log } from "../sidecar/log.js";
import { LEGACY_SECRET_KEYS, toImportableState } from "./host-state.js";

/**
 * The one-time move of the extension's old ExtensionContext storage (global state, this
 * workspace's state, secrets) into the core's files with ImportHostState. The core records
 * `__vscodeMigrationVersion` per scope and keeps values already in its files, so calling this
 * again (another window, a later start) changes nothing.
 */
export async function migrateHostState(
  context: vscode.ExtensionContext,
  supervisor: SidecarSupervisor,
  log: Log,
): Promise<void> {
  const { clients } = await supervisor.ready();
  const globalState = toImportableState(context.globalState.keys().map((k) => [k, context.globalState.get(k)]));
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const workspaces = folder
    ? [
        {
          workspaceRoot: folder,
          state: toImportableState(context.workspaceState.keys().map((k) => [k, context.workspaceState.get(k)])),
        },
      ]
    : [];
  const secrets: Record<string, string> = {};
  for (const key of LEGACY_SECRET_KEYS) {
    const value = await context.secrets.get(key);
    if (value) secrets[key] = value;
  }
  const res = await clients.settings.importHostState({ host: "vscode", globalState, workspaces, secrets });
  if (res.alreadyMigrated) log.info("host state: already migrated");
  else log.info(`host state migrated: ${res.importedKeys} imported, ${res.keptKeys} kept (Dline's files win)`);
}
