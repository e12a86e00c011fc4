/**
 * ACP's diff content carries whole texts; an edit too large to send whole shows in a tool call
 * (its permission request, its end, a replayed session) as its unified diff in a fenced block,
 * the fence longer than any backticks the diff holds.
 */
import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { diffContent } from "../../core/src/acp/tool-call-updates.js";
import { replayUpdates } from "../../core/src/acp/session-updates.js";
import { FileStatus } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { FileEditSchema } from "../../core/src/gen/dline/v1/task_pb.js";

const DIFF = "--- a/big.md\n+++ b/big.md\n@@ -1,1 +1,1 @@\n-old ``` fence\n+new ```` fence\n";
const FENCED = "`````diff\n" + DIFF.trimEnd() + "\n`````";

describe("an edit too large to send whole, in ACP", () => {
  it("shows as its unified diff, fenced; an edit with no diff (binary, or too large a diff) by its sizes and the text it writes", () => {
    const edits = [
      create(FileEditSchema, { path: "big.md", status: FileStatus.MODIFIED, truncated: true, diff: DIFF }),
      create(FileEditSchema, { path: "image.png", status: FileStatus.MODIFIED, truncated: true }),
      create(FileEditSchema, {
        path: "blob.bin",
        status: FileStatus.MODIFIED,
        truncated: true,
        originalSize: 2000n,
        proposedSize: 9n,
        originalBinary: true,
        proposedText: "now text\n",
      }),
      create(FileEditSchema, { path: "small.txt", status: FileStatus.ADDED, proposedText: "hi\n" }),
    ];
    expect(diffContent(edits, "/ws")).toEqual([
      { type: "content", content: { type: "text", text: FENCED } },
      { type: "content", content: { type: "text", text: "image.png (modified): too large or binary to show." } },
      {
        type: "content",
        content: {
          type: "text",
          text: "blob.bin (modified): binary, 2,000 bytes now, not shown; 9 bytes after. It writes:\n```\nnow text\n```",
        },
      },
      { type: "diff", path: "/ws/small.txt", oldText: null, newText: "hi\n" },
    ]);
  });

  it("a replayed session shows the finished edit the same way", () => {
    const detail = JSON.stringify({
      input: { path: "big.md" },
      ok: true,
      output: "written",
      toolCallId: "call-1",
      status: "done",
      edits: [{ path: "big.md", status: "modified", originalText: "", proposedText: "", truncated: true, diff: DIFF }],
    });
    const updates = replayUpdates(
      [
        {
          id: "m1",
          time: 1,
          role: "assistant",
          kind: "tool",
          text: "write_to_file big.md",
          partial: false,
          tool: "write_to_file",
          detail,
          checkpointId: "",
          askId: "",
        },
      ],
      "/ws",
    );
    expect(updates).toHaveLength(1);
    expect(updates[0]).toMatchObject({
      sessionUpdate: "tool_call",
      status: "completed",
      content: [{ type: "content", content: { type: "text", text: FENCED } }],
    });
  });

  it("a replayed session shows a binary file's edit by its sizes and the text it wrote, not its output alone", () => {
    const detail = JSON.stringify({
      input: { path: "blob.bin" },
      ok: true,
      output: "written",
      toolCallId: "call-2",
      status: "done",
      edits: [
        {
          path: "blob.bin",
          status: "modified",
          originalText: "",
          proposedText: "now text\n",
          truncated: true,
          originalBytes: 2000,
          proposedBytes: 9,
          originalBinary: true,
        },
      ],
    });
    const updates = replayUpdates([{ ...ROW, id: "m2", text: "write_to_file blob.bin", detail }], "/ws");
    expect(updates[0]).toMatchObject({
      sessionUpdate: "tool_call",
      content: [
        {
          type: "content",
          content: {
            type: "text",
            text: "blob.bin (modified): binary, 2,000 bytes now, not shown; 9 bytes after. It writes:\n```\nnow text\n```",
          },
        },
      ],
    });
  });
});

describe("a replayed answer that was cut off", () => {
  it("ends with a marker; a finished answer has none", () => {
    const updates = replayUpdates(
      [
        { ...ROW, id: "a1", kind: "text", tool: "", detail: "", text: "I was saying", cutOff: true },
        { ...ROW, id: "a2", kind: "text", tool: "", detail: "", text: "Finished." },
      ],
      "/ws",
    );
    expect(updates).toEqual([
      {
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: "I was saying\n\n[answer cut off here]" },
        messageId: "a1",
      },
      // A later answer of the same turn starts a paragraph of its own (for clients that ignore messageId).
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "\n\nFinished." }, messageId: "a2" },
    ]);
  });
});

const ROW = {
  id: "m1",
  time: 1,
  role: "assistant" as const,
  kind: "tool",
  text: "",
  partial: false,
  tool: "write_to_file",
  detail: "",
  checkpointId: "",
  askId: "",
};
