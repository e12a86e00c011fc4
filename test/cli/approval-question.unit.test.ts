import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { approvalQuestion } from "../../adapters/cli/src/commands/task.js";
import { AskKind, AskSchema } from "../../core/src/gen/dline/v1/task_pb.js";

describe("the CLI's approval question", () => {
  it("names the tool once: the summary names it already", () => {
    const ask = create(AskSchema, {
      kind: AskKind.TOOL_APPROVAL,
      tool: "replace_in_file",
      summary: "replace_in_file readme.md",
      detail: "{}",
    });
    expect(approvalQuestion(ask)).toBe("Approve replace_in_file readme.md? [y/N/feedback] ");
    const other = create(AskSchema, {
      kind: AskKind.TOOL_APPROVAL,
      tool: "use_mcp_tool",
      summary: "weather: forecast",
    });
    expect(approvalQuestion(other)).toBe("Approve use_mcp_tool: weather: forecast? [y/N/feedback] ");
  });
});
