/**
 * ACP session modes = the core's `mode` setting: "act" (the default) and "plan" (read and plan
 * only: the turn loop refuses tools that modify the workspace, run commands or start
 * subagents). A session's mode is the task's `mode` setting (tasks/<id>/settings.json, so every
 * editor sees it), resolved as usual (task, then workspace, then global). Before the first
 * prompt there is no task yet: a mode chosen then is kept here and written when the task starts.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { RequestError, type SessionMode, type SessionModeState } from "@agentclientprotocol/sdk";
import type { TaskMode } from "../runtime/index.js";
import type { InstanceLayout, SettingsDomain } from "../storage/index.js";

export const AVAILABLE_MODES: SessionMode[] = [
  {
    id: "act",
    name: "Act",
    description:
      "Dline reads, edits files and runs commands (with your approval where the approval settings ask for it).",
  },
  {
    id: "plan",
    name: "Plan",
    description:
      "Dline explores with read-only tools (and subagents that do the same) and proposes a plan; edits and commands are refused until you switch to Act.",
  },
];

export interface ModeSession {
  readonly id: string;
  readonly cwd: string;
  started: boolean;
  /** A mode chosen before the task exists (written to the task's settings when it starts). */
  pendingMode?: TaskMode;
  /** The mode the client was last told about (session/new, load, current_mode_update). */
  announcedMode?: TaskMode;
}

function asMode(value: unknown): TaskMode {
  return value === "plan" ? "plan" : "act";
}

export class SessionModes {
  constructor(
    private readonly settings: SettingsDomain,
    private readonly layout: InstanceLayout,
  ) {}

  async current(session: ModeSession): Promise<TaskMode> {
    if (!session.started && session.pendingMode) return session.pendingMode;
    const context = session.started
      ? { workspaceRoot: session.cwd, taskId: session.id }
      : { workspaceRoot: session.cwd };
    return asMode((await this.settings.resolver.resolve("mode", context)).value);
  }

  /** The modes for a session/new, load or resume response; what it says becomes the announced mode. */
  async state(session: ModeSession): Promise<SessionModeState> {
    session.announcedMode = await this.current(session);
    return { currentModeId: session.announcedMode, availableModes: AVAILABLE_MODES };
  }

  /** session/set_mode: the task's `mode` setting (or the pending mode of a session not started yet). */
  async set(session: ModeSession, modeId: string): Promise<TaskMode> {
    if (!AVAILABLE_MODES.some((m) => m.id === modeId)) {
      throw RequestError.invalidParams(
        undefined,
        `unknown mode "${modeId.slice(0, 100)}"; the modes are ${AVAILABLE_MODES.map((m) => m.id).join(", ")}`,
      );
    }
    const mode = modeId as TaskMode;
    if (session.started) await this.write(session.id, mode);
    else session.pendingMode = mode;
    session.announcedMode = mode;
    return mode;
  }

  /** Just before the first prompt creates the task: the mode chosen meanwhile becomes the task's setting. */
  async persistPending(session: ModeSession): Promise<void> {
    if (!session.started && session.pendingMode) await this.write(session.id, session.pendingMode);
  }

  /** The first prompt failed before the task existed: the settings file written for it goes again. */
  discardPending(session: ModeSession): void {
    if (session.started || !session.pendingMode) return;
    const files = this.layout.task(session.id);
    fs.rmSync(files.settingsJson, { force: true });
    try {
      fs.rmdirSync(path.dirname(files.settingsJson)); // only when nothing else was written there
    } catch {
      // not empty or already gone: the task's own files stay
    }
  }

  /** A change of mode the client was not told about yet (e.g. made in another editor), if any. */
  async changed(session: ModeSession): Promise<TaskMode | undefined> {
    const mode = await this.current(session);
    if (mode === session.announcedMode) return undefined;
    session.announcedMode = mode;
    return mode;
  }

  private async write(taskId: string, mode: TaskMode): Promise<void> {
    this.settings.registry.validatePatch({ mode }, "task");
    await this.settings.stores.taskSettings(taskId).applyPatch({ mode });
  }
}
