import type { JsonObject } from "@bufbuild/protobuf";
import { SettingsScope } from "../../../../core/src/gen/dline/v1/settings_pb.js";
import type { SidecarSupervisor } from "../sidecar/sidecar-supervisor.js";
import type { AutoApprovalView, ChatPreferences, ProfileForm } from "./chat-state.js";
import { autoApprovalFromCore, autoApprovalPatch, modeOf, profileViews } from "./preferences-mapping.js";

/**
 * The chat's footer controls, kept in the core: the mode (the `mode` setting: global, and the
 * open task's own), auto-approval (`autoApprovalSettings`), the model profiles, the default
 * one (`defaultProfileId`) and the open task's (SetTaskProfile). Every change goes to the core;
 * what the chat shows comes back from it.
 */
export class ChatPreferencesSource {
  private autoApproval: AutoApprovalView = autoApprovalFromCore({});

  constructor(
    private readonly supervisor: SidecarSupervisor,
    private readonly publish: (change: Partial<ChatPreferences>) => void,
  ) {}

  /** Reads it all from the core (a start, an opened task, a change made elsewhere). */
  async refresh(task: { taskId?: string; workspaceRoot?: string } = {}): Promise<void> {
    const { clients } = await this.supervisor.ready();
    const [profiles, settings, mode] = await Promise.all([
      clients.settings.listProfiles({}),
      clients.settings.getSettings({ scope: SettingsScope.GLOBAL }),
      clients.settings.resolveSetting({
        key: "mode",
        taskId: task.taskId ?? "",
        workspaceRoot: task.workspaceRoot ?? "",
      }),
    ]);
    this.fromGlobalSettings(settings.settings ?? {});
    this.publish({ loaded: true, profiles: profileViews(profiles.profiles), mode: modeOf(mode.value?.kind.value) });
  }

  /** The core's global settings changed (WatchSettings): auto-approval and the default model. */
  fromGlobalSettings(settings: Record<string, unknown>): void {
    this.autoApproval = autoApprovalFromCore(settings);
    this.publish({
      autoApproval: this.autoApproval,
      defaultProfileId: typeof settings.defaultProfileId === "string" ? settings.defaultProfileId : "",
    });
  }

  /** Plan or Act: for new tasks (global) and for the open task. */
  async setMode(mode: "act" | "plan", taskId: string | undefined): Promise<void> {
    const { clients } = await this.supervisor.ready();
    await clients.settings.updateSettings({ scope: SettingsScope.GLOBAL, patch: { mode } });
    if (taskId) await clients.settings.updateSettings({ scope: SettingsScope.TASK, taskId, patch: { mode } });
    this.publish({ mode });
  }

  async setAutoApproval(change: Partial<AutoApprovalView>): Promise<void> {
    const next = autoApprovalPatch(this.autoApproval, change);
    const { clients } = await this.supervisor.ready();
    const res = await clients.settings.updateSettings({
      scope: SettingsScope.GLOBAL,
      patch: { autoApprovalSettings: next as unknown as JsonObject },
    });
    this.fromGlobalSettings(res.settings ?? {});
  }

  /** The model picker: the open task's model, or (no task) the one new tasks use. */
  async selectProfile(profileId: string, taskId: string | undefined): Promise<void> {
    const { clients } = await this.supervisor.ready();
    if (taskId) {
      await clients.tasks.setTaskProfile({ taskId, profileId });
      this.publish({ taskProfileId: profileId });
    } else {
      await clients.settings.updateSettings({ scope: SettingsScope.GLOBAL, patch: { defaultProfileId: profileId } });
      this.publish({ defaultProfileId: profileId });
    }
  }

  /** The model form: the profile to the core, the key to its secret store, never to VS Code. */
  async saveProfile(form: ProfileForm, taskId: string | undefined): Promise<void> {
    const { clients } = await this.supervisor.ready();
    await clients.settings.upsertProfile({
      profile: {
        id: form.id,
        name: form.id,
        provider: form.provider,
        baseUrl: form.baseUrl,
        model: form.model,
        contextWindow: BigInt(Math.max(0, Math.floor(form.contextWindow))),
      },
    });
    if (form.apiKey) await clients.settings.setSecret({ profileId: form.id, name: "api_key", value: form.apiKey });
    if (form.makeDefault)
      await clients.settings.updateSettings({ scope: SettingsScope.GLOBAL, patch: { defaultProfileId: form.id } });
    // A task that failed for want of a model continues with the one just set up.
    if (form.makeDefault && taskId)
      await clients.tasks.setTaskProfile({ taskId, profileId: form.id }).catch(() => undefined);
    await this.refresh({ taskId });
  }
}
