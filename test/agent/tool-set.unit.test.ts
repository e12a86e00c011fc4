import { describe, expect, it } from "vitest";
import { builtinTools, findTool, runTool, toolSpecs } from "../../core/src/agent/tools/registry.js";
import { buildSystemPrompt } from "../../core/src/agent/system-prompt.js";
import { makeContext, makeWorkspace } from "./tool-helpers.js";

describe("the tool set", () => {
  it("uses the parameter names models know, with JSON schemas for native tool calling", () => {
    const params = Object.fromEntries(
      builtinTools.map((t) => [t.name, Object.keys((t.inputSchema as { properties: object }).properties)]),
    );
    expect(params).toEqual({
      read_file: ["path", "start_line", "end_line"],
      list_files: ["path", "recursive"],
      search_files: ["path", "regex", "file_pattern"],
      write_to_file: ["path", "content"],
      replace_in_file: ["path", "diff"],
      execute_command: ["command", "requires_approval"],
      ask_followup_question: ["question", "options"],
      attempt_completion: ["result"],
      new_subagent: ["prompt", "subagent"],
      update_plan: ["plan", "explanation"],
    });
    for (const spec of toolSpecs()) {
      expect(spec.inputSchema.type).toBe("object");
      expect(spec.description.length).toBeGreaterThan(20);
    }
  });

  it("marks the checkpoint spec's read-only tools (reads and questions) as read-only", () => {
    const readOnly = builtinTools.filter((t) => t.readOnly).map((t) => t.name);
    expect(readOnly).toEqual([
      "read_file",
      "list_files",
      "search_files",
      "ask_followup_question",
      "attempt_completion",
      "update_plan",
    ]);
  });

  it("turns questions and completion into interactions for the runtime", async () => {
    const ws = makeWorkspace();
    try {
      const ctx = await makeContext(ws.root);
      expect(
        await runTool(findTool("ask_followup_question")!, { question: "Which one?", options: '["a","b"]' }, ctx),
      ).toMatchObject({
        isError: false,
        interaction: { kind: "followup", question: "Which one?", options: ["a", "b"] },
      });
      expect(await runTool(findTool("attempt_completion")!, { result: "All done." }, ctx)).toMatchObject({
        interaction: { kind: "completion", result: "All done." },
      });
      expect(
        (await runTool(findTool("ask_followup_question")!, { question: "?", options: "not json" }, ctx)).content,
      ).toMatch(/array of strings/);
      const plan = [
        { step: "Read", status: "completed" },
        { step: "Fix", status: "in_progress", priority: "high" },
      ];
      expect(await runTool(findTool("update_plan")!, { plan }, ctx)).toMatchObject({
        isError: false,
        interaction: {
          kind: "plan",
          steps: [
            { step: "Read", status: "completed", priority: "medium" },
            { step: "Fix", status: "in_progress", priority: "high" },
          ],
        },
      });
      expect(
        await runTool(findTool("update_plan")!, { plan: [{ step: "Fix", status: "started" }] }, ctx),
      ).toMatchObject({ isError: true });
    } finally {
      ws.cleanup();
    }
  });
});

describe("buildSystemPrompt", () => {
  it("includes the workspace facts, every tool and the enabled rules", () => {
    const prompt = buildSystemPrompt(
      { os: "Linux 6.1", shell: "/bin/bash", cwd: "/home/me/project", date: "2026-11-29" },
      builtinTools,
      [
        { name: ".clinerules/style.md", text: "Use tabs.\n" },
        { name: "global/tests.md", text: "Always run the tests." },
      ],
    );
    expect(prompt).toContain("Operating system: Linux 6.1");
    expect(prompt).toContain("Default shell: /bin/bash");
    expect(prompt).toContain("/home/me/project");
    expect(prompt).toContain("2026-11-29");
    for (const tool of builtinTools) expect(prompt).toContain(`## ${tool.name}\n`);
    expect(prompt).toContain("## .clinerules/style.md\nUse tabs.");
    expect(prompt).toContain("Always run the tests.");
    expect(buildSystemPrompt({ os: "x", shell: "y", cwd: "z", date: "d" }, [], [])).not.toContain("# Rules");
  });
});
