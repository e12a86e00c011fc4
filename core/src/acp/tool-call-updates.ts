/**
 * A core tool call (its row's ToolCall, its ask, its end) in ACP's words: status, and the
 * content shown in the tool call: the diff of an edit (proposed, then applied), or why a call
 * failed, was rejected or interrupted.
 */
import * as path from "node:path";
import type { ToolCallContent, ToolCallStatus as AcpToolCallStatus } from "@agentclientprotocol/sdk";
import { FileStatus } from "../gen/dline/v1/checkpoint_pb.js";
import { ToolCallStatus, type FileEdit, type ToolCall } from "../gen/dline/v1/task_pb.js";
import { deniedText, leftOutEditContent, text, unifiedDiffContent } from "./session-updates.js";

export function acpStatus(status: ToolCallStatus): AcpToolCallStatus {
  switch (status) {
    case ToolCallStatus.PENDING:
      return "pending";
    case ToolCallStatus.RUNNING:
      return "in_progress";
    case ToolCallStatus.DONE:
      return "completed";
    default:
      return "failed";
  }
}

/**
 * Edits as ACP diffs (absolute paths). An edit whose texts are too large to send whole is shown
 * as its unified diff (a fenced block) when it has one, else by its sizes (and the text it
 * writes when that was sent).
 */
export function diffContent(edits: readonly FileEdit[], workspaceRoot: string): ToolCallContent[] {
  return edits.flatMap((e): ToolCallContent[] => {
    if (e.truncated)
      return [
        e.diff
          ? unifiedDiffContent(e.diff)
          : leftOutEditContent({
              path: e.path,
              status: FileStatus[e.status].toLowerCase(),
              originalBytes: Number(e.originalSize),
              proposedBytes: Number(e.proposedSize),
              originalBinary: e.originalBinary,
              proposedText: e.proposedText,
            }),
      ];
    return [
      {
        type: "diff",
        path: path.resolve(workspaceRoot, e.path),
        oldText: e.status === FileStatus.ADDED ? null : e.originalText,
        newText: e.proposedText,
      },
    ];
  });
}

/** What a call that is over without its tool's own result shows: why it did not run, or ran no further. */
export function settledContent(call: ToolCall): ToolCallContent[] {
  switch (call.status) {
    case ToolCallStatus.DENIED:
      return [
        {
          type: "content",
          content: text(deniedText(call.feedback, call.reason)),
        },
      ];
    case ToolCallStatus.FAILED:
    case ToolCallStatus.INTERRUPTED:
      return call.reason || call.output ? [{ type: "content", content: text(call.reason || call.output) }] : [];
    default:
      return call.output ? [{ type: "content", content: text(call.output) }] : [];
  }
}
