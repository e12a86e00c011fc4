import * as vscode from "vscode";
import { SettingsScope } from "../../../../core/src/gen/dline/v1/settings_pb.js";
import type { SidecarSupervisor } from "../sidecar/sidecar-supervisor.js";
import type { Log } from "../sidecar/log.js";
import {
  corePatchFromHost,
  HOST_DEFAULTS,
  HOST_KEYS,
  hostValuesFromCore,
  type HostKey,
  type JsonObject,
  type JsonValue,
} from "./settings-mapping.js";

/**
 * Keeps VS Code's `dline.*` user settings a mirror of the core's global settings: the core's
 * values are written into VS Code whenever they change (WatchSettings), and a change a person
 * makes in VS Code is sent to the core with UpdateSettings.
 */
export class SettingsMirror implements vscode.Disposable {
  private core: JsonObject | undefined;
  private watch: AbortController | undefined;
  private disposed = false;
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly coreChanged = new vscode.EventEmitter<JsonObject>();
  /** The core's global settings, each time they change (and once per start of the watch). */
  readonly onDidChangeCore = this.coreChanged.event;
  /** Serialises writes so that a burst of changes is applied in order. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly supervisor: SidecarSupervisor,
    private readonly log: Log,
  ) {
    this.subscriptions.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration("dline")) this.enqueue(() => this.pushHostChange());
      }),
    );
  }

  start(): void {
    const loop = async () => {
      while (!this.disposed) {
        this.watch = new AbortController();
        try {
          const { clients } = await this.supervisor.whenRunning();
          for await (const res of clients.settings.watchSettings(
            { scope: SettingsScope.GLOBAL },
            { signal: this.watch.signal },
          )) {
            const settings = res.settings ?? {};
            this.coreChanged.fire(settings);
            this.enqueue(() => this.applyCore(settings));
          }
        } catch (err) {
          if (this.disposed) return;
          this.log.warn(`settings watch interrupted: ${(err as Error).message}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    };
    void loop();
  }

  /** Waits for the writes queued so far (for callers that need the mirror settled). */
  settled(): Promise<void> {
    return this.queue;
  }

  private enqueue(job: () => Promise<void>): void {
    this.queue = this.queue.then(job).catch((err) => this.log.warn(`settings mirror: ${(err as Error).message}`));
  }

  private async applyCore(settings: JsonObject): Promise<void> {
    this.core = settings;
    const config = vscode.workspace.getConfiguration("dline");
    const wanted = hostValuesFromCore(settings);
    for (const key of HOST_KEYS) {
      if (hostValue(config, key) !== wanted[key]) {
        // The default is written as "unset", so the user's settings.json stays clean.
        await config.update(
          key,
          wanted[key] === HOST_DEFAULTS[key] ? undefined : wanted[key],
          vscode.ConfigurationTarget.Global,
        );
      }
    }
  }

  private async pushHostChange(): Promise<void> {
    if (!this.core) return; // not mirrored yet: the core's values will overwrite VS Code's
    const config = vscode.workspace.getConfiguration("dline");
    const host = { ...HOST_DEFAULTS };
    for (const key of HOST_KEYS) host[key] = hostValue(config, key);
    const patch = corePatchFromHost(host, this.core);
    if (!patch) return;
    const { clients } = await this.supervisor.ready();
    const res = await clients.settings.updateSettings({ scope: SettingsScope.GLOBAL, patch });
    this.core = res.settings ?? this.core;
    this.log.info(`settings sent to the core: ${Object.keys(patch).join(", ")}`);
  }

  dispose(): void {
    this.disposed = true;
    this.watch?.abort();
    this.coreChanged.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}

function hostValue(config: vscode.WorkspaceConfiguration, key: HostKey): JsonValue {
  const inspected = config.inspect<JsonValue>(key);
  return inspected?.globalValue ?? HOST_DEFAULTS[key];
}
