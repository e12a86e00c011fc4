import { ProfileSource, type Profile } from "../../../../core/src/gen/dline/v1/settings_pb.js";
import { AUTO_APPROVAL_DEFAULTS, type AutoApprovalView, type ProfileView } from "./chat-state.js";

type Json = Record<string, unknown>;

/** The chat's auto-approval switches from the core's global `autoApprovalSettings` (defaults for what is unset). */
export function autoApprovalFromCore(settings: Json): AutoApprovalView {
  const raw = settings.autoApprovalSettings;
  const auto = raw && typeof raw === "object" && !Array.isArray(raw) ? (raw as Json) : {};
  const view: AutoApprovalView = { ...AUTO_APPROVAL_DEFAULTS };
  for (const key of Object.keys(AUTO_APPROVAL_DEFAULTS) as (keyof AutoApprovalView)[]) {
    const value = auto[key];
    if (typeof value === typeof AUTO_APPROVAL_DEFAULTS[key]) (view as unknown as Json)[key] = value;
  }
  return view;
}

/** The whole object UpdateSettings gets for a change of some switches (the core replaces it whole). */
export function autoApprovalPatch(current: AutoApprovalView, change: Partial<AutoApprovalView>): AutoApprovalView {
  const next = { ...current };
  for (const key of Object.keys(AUTO_APPROVAL_DEFAULTS) as (keyof AutoApprovalView)[]) {
    const value = change[key];
    if (value !== undefined && typeof value === typeof AUTO_APPROVAL_DEFAULTS[key])
      (next as unknown as Json)[key] = value;
  }
  return next;
}

export function profileViews(profiles: readonly Profile[]): ProfileView[] {
  return profiles.map((p) => ({
    id: p.id,
    name: p.name,
    provider: p.provider,
    model: p.model,
    baseUrl: p.baseUrl,
    fromEnvironment: p.source === ProfileSource.ENVIRONMENT,
    hasKey: p.secretsSet.includes("api_key"),
    contextWindow: Number(p.contextWindow),
  }));
}

export function modeOf(value: unknown): "act" | "plan" {
  return value === "plan" ? "plan" : "act";
}
