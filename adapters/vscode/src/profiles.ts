import * as vscode from "vscode";
import { SettingsScope } from "../../../core/src/gen/dline/v1/settings_pb.js";
import type { SidecarSupervisor } from "./sidecar/sidecar-supervisor.js";

/**
 * Profiles live in the core (api_profiles.json); these commands edit them with input boxes.
 * Secrets typed here go straight to SetSecret: never into VS Code settings or state.
 */
export function registerProfileCommands(supervisor: SidecarSupervisor): vscode.Disposable[] {
  return [
    vscode.commands.registerCommand("dline.configureProfile", async () => {
      const provider = await vscode.window.showQuickPick(
        [
          { label: "anthropic", detail: "Anthropic Messages API" },
          { label: "openai", detail: "Any OpenAI-compatible Chat Completions endpoint" },
        ],
        { title: "Dline profile: provider" },
      );
      if (!provider) return;
      const id = await vscode.window.showInputBox({ title: "Dline profile: id", value: provider.label, validateInput: (v) => (/^[A-Za-z0-9_.-]+$/.test(v) ? undefined : "Letters, digits, _ . - only") });
      if (!id) return;
      const baseUrl = await vscode.window.showInputBox({ title: "Dline profile: base URL (empty for the provider's default)" });
      if (baseUrl === undefined) return;
      const model = await vscode.window.showInputBox({ title: "Dline profile: model" });
      if (!model) return;
      const { clients } = await supervisor.ready();
      await clients.settings.upsertProfile({ profile: { id, name: id, provider: provider.label, baseUrl, model } });
      await setApiKey(supervisor, id);
      const makeDefault = await vscode.window.showQuickPick(["Yes", "No"], { title: `Use ${id} for new tasks?` });
      if (makeDefault === "Yes") {
        await clients.settings.updateSettings({ scope: SettingsScope.GLOBAL, patch: { defaultProfileId: id } });
      }
    }),
    vscode.commands.registerCommand("dline.setApiKey", async (profileId?: string) => {
      let id = profileId;
      if (!id) {
        const { clients } = await supervisor.ready();
        const profiles = (await clients.settings.listProfiles({})).profiles;
        const picked = await vscode.window.showQuickPick(
          profiles.map((p) => ({ label: p.id, description: `${p.provider} · ${p.model}`, detail: p.secretsSet.includes("api_key") ? "API key set" : "No API key" })),
          { title: "Set the API key of which profile?" },
        );
        id = picked?.label;
      }
      if (id) await setApiKey(supervisor, id);
    }),
  ];
}

async function setApiKey(supervisor: SidecarSupervisor, profileId: string): Promise<void> {
  const value = await vscode.window.showInputBox({ title: `API key for ${profileId}`, password: true, ignoreFocusOut: true });
  if (!value) return;
  const { clients } = await supervisor.ready();
  await clients.settings.setSecret({ profileId, name: "api_key", value });
  void vscode.window.showInformationMessage(`Dline: API key saved for ${profileId}.`);
}
