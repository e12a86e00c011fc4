import type { TaskLayout } from "../storage/index.js";
import type {
  JournalStore,
  MessageStore,
  StoredUiMessage,
  MetricsStore,
  StateFile,
  TaskStatusName,
} from "../tasks/index.js";
import { AskBroker } from "./ask-broker.js";
import { toolCallOf } from "./tool-call-record.js";
import type { TaskEventLog } from "./event-log.js";
import type { RecordedEvent } from "./recent-events.js";
import type { RuntimeEvent, TaskRunStatus } from "./runtime-events.js";

/** The kernel snapshot in state.json: enough to reopen and recover the task. */
export interface KernelState {
  status: TaskStatusName;
  /** Why the task stands at `status`, as its last StatusChanged said ("" when none was given). */
  statusReason?: string;
  workspaceRoot: string;
  profileId: string;
  /** Messages the user sent while a run was going; taken at the next step. */
  inputQueue: string[];
  /** The seq of the last event emitted, so seq keeps increasing across restarts. */
  lastSeq: string;
  /** Seqs up to this one may have been handed out (see TaskEventLog's reservation). */
  seqReserved?: string;
  /**
   * The task's newest events as the last process that held it saved them (recent-events.ts),
   * for a window whose sidecar did not follow that process in time.
   */
  recentEvents?: RecordedEvent[];
  /** The question the task waits on (a RuntimeAsk; earlier versions wrote an Ask's Connect JSON), while it waits. Only its askId is read back. */
  pendingAsk?: unknown;
  updatedAt: number;
}

export function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** Opens a task's stores (each call opens new connections). */
export interface TaskStoreOpeners {
  messages(): MessageStore;
  journal(): JournalStore;
  metrics(): MetricsStore;
}

/**
 * One task loaded in this process: its stores, event log, pending ask and current run. The
 * stores open on first use and are closed while the task is idle here (closeStores): a sidecar
 * keeps every task it has shown or run loaded, and an idle task must not hold its databases
 * (their WAL and shared memory stay on disk as long as a connection is open).
 */
export class LiveTask {
  run: { controller: AbortController; done: Promise<void> } | undefined;
  readonly asks = new AskBroker();
  /** The status last announced on the event stream (undefined: none yet in this process). */
  lastStatus: TaskRunStatus | undefined;
  /**
   * The reason of a completion the run reached while messages were queued (undefined: none):
   * not announced, since the run goes on with them (TaskRuntime.start); announced only if the
   * run stops before taking them.
   */
  heldCompletion: string | undefined;
  /**
   * The events the last process that held the task left in its state (the `recentEvents` it
   * was loaded with): what this process sends a subscriber behind its first seq.
   */
  recorded: RuntimeEvent[] = [];
  /**
   * The `updatedAt` of the state on disk as this process last read or wrote it: another value
   * there means another process saved the task since. (The kernel's own is newer when a save
   * failed, a full disk: that copy is not stale, and must not be replaced by the older one.)
   */
  storedUpdatedAt: number | undefined;
  /** The last run's end, its claim released when nothing is pending (`run` is cleared before that). */
  runSettled: Promise<void> = Promise.resolve();
  private usedToolCallIds: Set<string> | undefined;
  private opened: { messages?: MessageStore; journal?: JournalStore; metrics?: MetricsStore } = {};

  constructor(
    readonly id: string,
    readonly files: TaskLayout,
    private readonly openers: TaskStoreOpeners,
    readonly state: StateFile<KernelState>,
    readonly events: TaskEventLog,
    public kernel: KernelState,
  ) {}

  get messages(): MessageStore {
    return (this.opened.messages ??= this.openers.messages());
  }
  get journal(): JournalStore {
    return (this.opened.journal ??= this.openers.journal());
  }
  get metrics(): MetricsStore {
    return (this.opened.metrics ??= this.openers.metrics());
  }

  /** The tool call ids of the task's rows, read once, then kept up to date by the turn loops. */
  get toolCallIds(): Set<string> {
    this.usedToolCallIds ??= new Set(this.messages.list().flatMap((m) => toolCallIdOf(m)));
    return this.usedToolCallIds;
  }

  /**
   * Closes the stores that are open, each even when another fails (a buffered write that a
   * full disk refused is thrown by its store's close); the first failure is thrown at the end.
   * The next use opens them again.
   */
  closeStores(): void {
    const stores = Object.values(this.opened);
    this.opened = {};
    const failures: unknown[] = [];
    for (const store of stores) {
      try {
        store.close();
      } catch (err) {
        failures.push(err);
      }
    }
    if (failures.length > 0) throw failures[0];
  }

  /** Ends the event streams and closes the stores (see closeStores). */
  close(): void {
    this.events.close();
    this.closeStores();
  }
}

function toolCallIdOf(m: StoredUiMessage): string[] {
  const call = toolCallOf(m);
  return call ? [call.toolCallId] : [];
}
