import * as vscode from "vscode";
import type { DlineApi } from "../api.js";
import type { DlineClients } from "../../../../core/src/client/index.js";
import { assert, waitFor } from "./runner.js";
import type { UiBridge } from "./ui-bridge.js";

export const EXTENSION_ID = "dline.dline-vscode";

/** Opens the chat view (the extension activates on it) and returns the extension's API. */
export async function activateDline(): Promise<DlineApi> {
  const extension = vscode.extensions.getExtension<DlineApi>(EXTENSION_ID);
  assert(extension, `extension ${EXTENSION_ID} is not loaded`);
  await vscode.commands.executeCommand("dline.chat.focus");
  return extension.activate();
}

export function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run this suite through test/vscode/e2e.test.ts`);
  return value;
}

/** How many requests the scripted model server has received. */
export async function modelRequests(): Promise<number> {
  const res = await fetch(`${required("DLINE_E2E_MODEL_URL")}/__requests`);
  return ((await res.json()) as unknown[]).length;
}

export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function allTabs(): vscode.Tab[] {
  return vscode.window.tabGroups.all.flatMap((g) => g.tabs);
}

export async function waitForTab(title: string): Promise<vscode.Tab> {
  const matches = (t: vscode.Tab) =>
    t.label === title || t.label.startsWith(`${title} (`) || t.label.endsWith(`(${title})`);
  return waitFor(`a tab titled "${title}"`, () => allTabs().find(matches), 10_000).catch((err) => {
    throw new Error(`${(err as Error).message}; tabs: ${JSON.stringify(allTabs().map((t) => t.label))}`);
  });
}

export function waitForGeneration(api: DlineApi, after: number, timeoutMs: number): Promise<number> {
  return Promise.race([
    api.waitForCore(after),
    new Promise<number>((_, reject) =>
      setTimeout(() => reject(new Error("the core was not restarted in time")), timeoutMs),
    ),
  ]);
}

/** Adds an OpenAI-compatible model profile (the scripted model server) with its API key. */
export async function addOpenAiProfile(
  clients: DlineClients,
  profile: { id: string; name: string; baseUrl: string; model: string; contextWindow: bigint },
  apiKey: string,
): Promise<void> {
  await clients.settings.upsertProfile({ profile: { ...profile, provider: "openai" } });
  await clients.settings.setSecret({ profileId: profile.id, name: "api_key", value: apiKey });
}

/**
 * The scripted model's profile ("scripted") and key, from DLINE_E2E_MODEL_URL and
 * DLINE_E2E_API_KEY (an upsert: the same profile again is no change).
 */
export async function addScriptedProfile(api: DlineApi, profileId = "scripted"): Promise<void> {
  await addOpenAiProfile(
    await api.clients(),
    {
      id: profileId,
      name: "Scripted",
      baseUrl: required("DLINE_E2E_MODEL_URL"),
      model: "scripted-model",
      contextWindow: 128_000n,
    },
    required("DLINE_E2E_API_KEY"),
  );
}

/** A notice in the notifications center. */
export const NOTIFICATION = ".notifications-center .notification-list-item";

/**
 * What the notifications center lists (the smoke-test driver shows no toasts), opened again at
 * each look: a focus change (a closing menu, the chat taking focus) can close it meanwhile, and
 * a notice added then was never read.
 */
export async function notificationTexts(ui: UiBridge): Promise<string[]> {
  await vscode.commands.executeCommand("notifications.showList");
  return ui.request({ action: "texts", selector: NOTIFICATION, frame: "main" });
}
