import type { StoredUiMessage } from "../tasks/index.js";
import { toolCallDetail, type ToolCallRecord, type ToolCallStatusName } from "./tool-call-record.js";

/** What a row needs from the turn loop: add a UI message and replace it (both announced as events). */
export interface RowHost {
  addMessage(init: Partial<StoredUiMessage>): StoredUiMessage;
  finalize(message: StoredUiMessage): void;
}

/**
 * The chat row of one tool call, from the moment it is proposed (pending approval, or running
 * when auto-approved) or refused, to its end (done, failed, denied, interrupted). Every change
 * replaces the whole row (message_finalized, `partial` while the call is not over).
 */
export class ToolRow {
  readonly message: StoredUiMessage;
  readonly record: ToolCallRecord;

  constructor(
    private readonly host: RowHost,
    init: Pick<ToolCallRecord, "toolCallId" | "tool" | "status" | "input"> & Partial<ToolCallRecord>,
    summary: string,
  ) {
    this.record = {
      output: "",
      outputTruncated: false,
      edits: [],
      command: undefined,
      feedback: "",
      reason: "",
      ...init,
    };
    this.message = host.addMessage({
      role: "tool",
      kind: init.tool === "execute_command" ? "command" : "tool",
      tool: init.tool,
      text: summary,
      detail: toolCallDetail(this.record),
      partial: !ToolRow.over(this.record.status),
    });
  }

  static over(status: ToolCallStatusName): boolean {
    return status !== "pending" && status !== "running";
  }

  get toolCallId(): string {
    return this.record.toolCallId;
  }

  get over(): boolean {
    return ToolRow.over(this.record.status);
  }

  update(patch: Partial<ToolCallRecord>): void {
    Object.assign(this.record, patch);
    this.message.detail = toolCallDetail(this.record);
    this.message.partial = !this.over;
    this.host.finalize(this.message);
  }
}
