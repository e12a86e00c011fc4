import * as vscode from "vscode";
import type { SidecarSupervisor } from "./sidecar/sidecar-supervisor.js";

/**
 * Profiles live in the core (api_profiles.json); the chat's model form sets them up, and Set
 * API Key changes a key in a password box. Secrets typed here go straight to SetSecret: never
 * into VS Code settings or state.
 */
export function registerProfileCommands(supervisor: SidecarSupervisor): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand("dline.setApiKey", async (profileId?: string) => {
      let id = profileId;
      if (!id) {
        const { clients } = await supervisor.ready();
        const profiles = (await clients.settings.listProfiles({})).profiles;
        const picked = await vscode.window.showQuickPick(
          profiles.map((p) => ({
            label: p.id,
            description: `${p.provider} · ${p.model}`,
            detail: p.secretsSet.includes("api_key") ? "API key set" : "No API key",
          })),
          { title: "Set the API key of which profile?" },
        );
        id = picked?.label;
      }
      if (id) await setApiKey(supervisor, id);
    }),
  ];
}

async function setApiKey(supervisor: SidecarSupervisor, profileId: string): Promise<void> {
  const value = await vscode.window.showInputBox({
    title: `API key for ${profileId}`,
    password: true,
    ignoreFocusOut: true,
  });
  if (!value) return;
  const { clients } = await supervisor.ready();
  await clients.settings.setSecret({ profileId, name: "api_key", value });
  void vscode.window.showInformationMessage(`Dline: API key saved for ${profileId}.`);
}
