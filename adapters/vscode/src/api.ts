import type { DlineClients } from "../../../core/src/client/index.js";
import type { ChatState, ViewChangesTarget } from "./chat/chat-state.js";
import type { ShownDiff } from "./checkpoints/diff-presenter.js";
import type { TaskSummary } from "../../../core/src/gen/dline/v1/task_pb.js";
import type { Capability } from "../../../core/src/gen/dline/v1/settings_pb.js";

/**
 * What the extension gives other extensions (vscode.extensions.getExtension("dline.dline-vscode")
 * .exports): the running core's clients and the chat's state, to build on Dline without
 * starting a second sidecar.
 */
export interface DlineApi {
  /** The clients of the running core (waits for a start or restart in progress). */
  clients(): Promise<DlineClients>;
  /** Pid of the running core, if one runs. */
  corePid(): number | undefined;
  /** How many times the core has been started in this window. */
  coreGeneration(): number;
  /** Waits until a core with a generation above `generation` runs. */
  waitForCore(afterGeneration: number): Promise<number>;
  /** True while the core cannot start (from a failed start until the next successful one). */
  coreFailing(): boolean;
  chat: {
    state(): ChatState;
    onDidChangeState(listener: (state: ChatState) => void): { dispose(): void };
    compare(checkpointId: string): Promise<ShownDiff[]>;
    /** The latest completion's changes, or those of the completion `which` names. */
    viewChanges(which?: ViewChangesTarget): Promise<ShownDiff[]>;
  };
  history: {
    list(): Promise<TaskSummary[]>;
  };
  capabilities: {
    /** What the Capabilities view lists (ListCapabilities for the first workspace folder). */
    list(): Promise<Capability[]>;
  };
}
