import { toJsonString } from "@bufbuild/protobuf";
import { visible, visibleLine } from "../../../core/src/text/visible-text.js";
import { approvalDetails } from "./approval-view.js";
import { MESSAGES as CHECKPOINT_MESSAGES } from "../../../core/src/checkpoints/workspace-guard.js";
import {
  AskKind,
  AskSchema,
  MessageRole,
  TaskEventSchema,
  TaskStatus,
  type Ask,
  type CheckpointStatusChanged,
  type TaskEvent,
} from "../../../core/src/gen/dline/v1/task_pb.js";
import { withThousands } from "../../../core/src/text/numbers.js";

/**
 * Checkpoint status on stderr while a task runs, so that the wait for a first baseline (seconds
 * on a large repository) is visible: on a terminal one line rewritten in place ("taking in 11,500
 * of 27,668 files"), otherwise a line per phase ("taking in 27,668 files"), with no count that
 * would be stale as soon as it is printed.
 */
/** The core's sentence for checkpoints that are ready with nothing more to say (workspace-guard.ts). */
const READY = "Checkpoints are ready.";

export class CheckpointStatusLine {
  private shown = "";
  private open = false;

  constructor(private readonly err: NodeJS.WritableStream & { isTTY?: boolean }) {}

  render(s: CheckpointStatusChanged): void {
    const state = s.state.replace(/^CHECKPOINT_STATE_/, "").toLowerCase();
    // On a terminal the count is rewritten as it grows; a line per phase is printed once, at
    // the phase's start, so it names what the phase takes in, not a count stale at once ("0 of").
    const total = withThousands(s.filesTotal);
    const files = s.filesTotal === 1n ? "file" : "files";
    const counts =
      s.phase === "staging" && s.filesTotal > 0n
        ? this.err.isTTY
          ? ` ${withThousands(s.filesDone)} of ${total} ${files}`
          : ` ${total} ${files}`
        : "";
    // Before any phase, a sentence other than "initializing" says why (another window's lock).
    const why = state === "initializing" && !s.phase && s.message !== CHECKPOINT_MESSAGES.initializing;
    const detail =
      s.phase === "scanning"
        ? ": scanning the workspace"
        : s.phase === "staging"
          ? `: taking in${counts || " what changed"}`
          : why
            ? `: ${s.message}`
            : "";
    const label = state === "slow" ? "initializing (slow: a large repository?)" : state;
    // Ready with a sentence of its own (an index or HEAD repaired, a repository rebuilt) says it.
    const plain = state === "initializing" || state === "slow" || (state === "ready" && s.message === READY);
    const text = plain ? `checkpoints ${label}${detail}` : `checkpoints ${state}: ${s.message}`;
    if (this.err.isTTY) {
      // One terminal row, rewritten: a longer line would wrap, and \r only goes back one row.
      const width = (this.err as { columns?: number }).columns ?? 80;
      this.err.write(`\r\x1b[2K${text.slice(0, Math.max(20, width - 1))}`);
      this.open = true;
      if (state !== "initializing" && state !== "slow") this.end();
      return;
    }
    // Not a terminal: one line per phase or state, not per count; the slow sentence once.
    const key = `${state}:${s.phase}${why ? `:${s.message}` : ""}`;
    if (key === this.shown) return;
    if (state === "slow" && !this.shown.startsWith("slow:")) this.err.write(`checkpoints: ${s.message}\n`);
    this.shown = key;
    this.err.write(`${text}\n`);
  }

  /** Ends a line rewritten in place before other output. */
  end(): void {
    if (!this.open) return;
    this.err.write("\n");
    this.open = false;
  }
}

/**
 * The line after an answer stopped midway (a Cancel, a sidecar that stopped or died): its text
 * ends where the stream stopped, not where the model meant it to.
 */
export const CUT_OFF_LINE = "[answer cut off here]";

/** Turns a task's events into terminal output (or JSON lines with --json). */
export class EventRenderer {
  private inText = false;
  private lastSeq = 0n;
  /** The reasoning message being streamed (shown apart from the answer, after "thinking:"). */
  private reasoningId = "";

  private readonly checkpointLine: CheckpointStatusLine | undefined;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly json: boolean,
    err?: NodeJS.WritableStream & { isTTY?: boolean },
  ) {
    this.checkpointLine = err && new CheckpointStatusLine(err);
  }

  get seq(): bigint {
    return this.lastSeq;
  }

  private line(text: string): void {
    if (this.inText) this.out.write("\n");
    this.inText = false;
    this.out.write(text + "\n");
  }

  /** A question the task waits on already (a follower starts after it was asked). */
  renderAsk(ask: Ask): void {
    if (this.json) {
      this.out.write(`{"pendingAsk":${toJsonString(AskSchema, ask)}}\n`);
      return;
    }
    this.askLines(ask);
  }

  private askLines(ask: Ask): void {
    if (ask.kind === AskKind.FOLLOWUP) return;
    this.line(`? ${AskKind[ask.kind].toLowerCase()}: ${visibleLine(ask.summary)}`);
    // Asked again (its file changed on disk while it waited): why, before the change shown again.
    if (ask.askedAgainBecause) this.line(`  ${visibleLine(ask.askedAgainBecause)}`);
    // What is approved: the exact change of an edit, or the exact command line and its folder.
    this.out.write(approvalDetails(ask));
  }

  render(event: TaskEvent): void {
    this.lastSeq = event.seq;
    if (this.json) {
      this.out.write(toJsonString(TaskEventSchema, event) + "\n");
      return;
    }
    const e = event.event;
    if (e.case === "checkpointStatus") {
      this.checkpointLine?.render(e.value);
      return;
    }
    this.checkpointLine?.end();
    switch (e.case) {
      case "messageAdded": {
        const m = e.value.message!;
        if (m.kind === "reasoning") {
          if (this.inText) this.out.write("\n");
          this.out.write(`(thinking) ${visible(m.text)}`);
          this.inText = true;
          this.reasoningId = m.id;
        } else if (m.kind === "compaction") this.line(`[context] ${visibleLine(m.text)}`);
        else if (m.kind === "text" && m.role === MessageRole.ASSISTANT) {
          if (this.inText) this.out.write("\n");
          this.out.write(visible(m.text));
          this.inText = true;
        } else if (m.kind === "completion") this.line(`\n✔ ${visible(m.text)}`);
        else if (m.kind === "text" && m.role === MessageRole.USER) this.line(`> ${visible(m.text)}`);
        else if (m.kind === "followup") this.line(`? ${visible(m.text)}`);
        break;
      }
      case "messageDelta":
        this.out.write(visible(e.value.text));
        this.inText = true;
        break;
      case "reasoningDelta":
        this.out.write(visible(e.value.text));
        this.inText = true;
        break;
      case "messageFinalized":
        if (this.inText) this.out.write("\n");
        this.inText = false;
        if (e.value.message?.id === this.reasoningId) this.reasoningId = "";
        if (e.value.message?.cutOff) this.out.write(`${CUT_OFF_LINE}\n`);
        break;
      case "modelRetry":
        // Text already printed cannot be taken back: say that it does not count.
        this.line(
          `⟳ ${visibleLine(e.value.message)}${e.value.discardedMessageIds.length > 0 ? " (the partial answer above is dropped)" : ""}: ${visibleLine(e.value.reason)}`,
        );
        break;
      case "modelWaiting":
        this.line(`… ${visibleLine(e.value.message)}`);
        break;
      case "toolStarted":
        this.line(`» ${visibleLine(e.value.summary)}`);
        break;
      case "toolOutput":
        if (this.inText) this.out.write("\n");
        this.inText = false;
        this.out.write(visible(e.value.chunk));
        break;
      case "toolFinished":
        this.line(
          e.value.ok
            ? "  ✓ done"
            : `  ✗ ${visibleLine(e.value.reason || e.value.result.split("\n")[0]!.slice(0, 300))}`,
        );
        break;
      case "checkpointSaved":
        // The baseline is the one a person looks for to undo the whole task.
        this.line(
          `  [${e.value.kind === "CHECKPOINT_KIND_BASELINE" ? "baseline checkpoint" : "checkpoint"} ${e.value.checkpointId.slice(0, 12)}]`,
        );
        break;
      case "filesRestored":
        // Restored here or in another window (a follower hears it too).
        this.line(
          e.value.undo
            ? "  [restore undone: the files are back as they were before it]"
            : `  [files restored to checkpoint ${e.value.checkpointId.slice(0, 12)}]`,
        );
        break;
      case "error":
        this.line(`error (${visibleLine(e.value.code)}): ${visible(e.value.message)}`);
        break;
      case "statusChanged":
        if (e.value.status !== TaskStatus.RUNNING && e.value.status !== TaskStatus.WAITING) {
          const status = TaskStatus[e.value.status].toLowerCase();
          // A reason that only repeats the status ("cancelled: cancelled") says nothing more.
          const reason =
            e.value.reason && e.value.reason.toLowerCase() !== status ? `: ${visibleLine(e.value.reason)}` : "";
          this.line(`[${status}${reason}]`);
        }
        break;
      case "ask":
        this.askLines(e.value);
        break;
      default:
        break;
    }
  }
}

/** True for statuses that end a run (the CLI stops following the task). */
export function isTerminal(status: TaskStatus): boolean {
  return (
    status === TaskStatus.COMPLETED ||
    status === TaskStatus.FAILED ||
    status === TaskStatus.CANCELLED ||
    status === TaskStatus.INTERRUPTED
  );
}
