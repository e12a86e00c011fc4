import { toJsonString } from "@bufbuild/protobuf";
import { AskKind, TaskEventSchema, TaskStatus, type TaskEvent } from "../../../core/src/gen/dline/v1/task_pb.js";

/** Turns a task's events into terminal output (or JSON lines with --json). */
export class EventRenderer {
  private inText = false;
  private lastSeq = 0n;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly json: boolean,
  ) {}

  get seq(): bigint {
    return this.lastSeq;
  }

  private line(text: string): void {
    if (this.inText) this.out.write("\n");
    this.inText = false;
    this.out.write(text + "\n");
  }

  render(event: TaskEvent): void {
    this.lastSeq = event.seq;
    if (this.json) {
      this.out.write(toJsonString(TaskEventSchema, event) + "\n");
      return;
    }
    const e = event.event;
    switch (e.case) {
      case "messageAdded": {
        const m = e.value.message!;
        if (m.kind === "text" && m.role === 2 /* assistant */) {
          if (this.inText) this.out.write("\n");
          this.out.write(m.text);
          this.inText = true;
        } else if (m.kind === "completion") this.line(`\n✔ ${m.text}`);
        else if (m.kind === "text" && m.role === 1 /* user */) this.line(`> ${m.text}`);
        else if (m.kind === "followup") this.line(`? ${m.text}`);
        break;
      }
      case "messageDelta":
        this.out.write(e.value.text);
        this.inText = true;
        break;
      case "messageFinalized":
        if (this.inText) this.out.write("\n");
        this.inText = false;
        break;
      case "toolStarted":
        this.line(`» ${e.value.summary}`);
        break;
      case "toolOutput":
        if (this.inText) this.out.write("\n");
        this.inText = false;
        this.out.write(e.value.chunk);
        break;
      case "toolFinished":
        this.line(e.value.ok ? "  ✓ done" : `  ✗ ${e.value.result.split("\n")[0].slice(0, 300)}`);
        break;
      case "checkpointSaved":
        this.line(`  [checkpoint ${e.value.checkpointId.slice(0, 12)}]`);
        break;
      case "error":
        this.line(`error (${e.value.code}): ${e.value.message}`);
        break;
      case "statusChanged":
        if (e.value.status !== TaskStatus.RUNNING && e.value.status !== TaskStatus.WAITING) {
          this.line(`[${TaskStatus[e.value.status].toLowerCase()}${e.value.reason ? `: ${e.value.reason}` : ""}]`);
        }
        break;
      case "ask":
        if (e.value.kind !== AskKind.FOLLOWUP) this.line(`? ${AskKind[e.value.kind].toLowerCase()}: ${e.value.summary}`);
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
