import { describe, expect, it } from "vitest";
import { visibleUserText } from "../../core/src/import/index.js";

describe("the text a Cline 4 user message shows", () => {
  it("is the content of <user_input>, without attachments outside it", () => {
    expect(
      visibleUserText('<user_input mode="act">Fix the bug</user_input>\n<file_content path="a">x</file_content>'),
    ).toBe("Fix the bug");
  });
  it("reads <user_command slash> as /command", () => {
    expect(
      visibleUserText(
        '<user_input mode="plan"><user_command slash="deep-planning">for the api</user_command></user_input>',
      ),
    ).toBe("/deep-planning for the api");
    expect(visibleUserText('<user_command slash="newtask"></user_command>')).toBe("/newtask");
  });
  it("removes <mode_notice> elements", () => {
    expect(visibleUserText('<user_input mode="act"><mode_notice>Now in act mode</mode_notice>Go on</user_input>')).toBe(
      "Go on",
    );
  });
  it("is the typed text when there is no wrapper", () => {
    expect(visibleUserText("  just typed  ")).toBe("just typed");
  });
  it("is empty for prompts the runtime sends as the user", () => {
    expect(visibleUserText('<hook_context source="PreToolUse">lint ok</hook_context>')).toBe("");
    expect(visibleUserText("[TASK RESUMPTION] This task was interrupted 5 minutes ago.")).toBe("");
    expect(visibleUserText("[The user has switched to ACT MODE, so you may now proceed with the task.]")).toBe("");
  });
});
