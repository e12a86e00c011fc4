/**
 * A replayed answer that was cut off (a Cancel, a stopped sidecar) ends with the cut-off marker:
 * outside the code block the answer stopped in, so that a client's markdown shows the marker as
 * text, and the code block ends where the answer did.
 */
import { describe, expect, it } from "vitest";
import { CUT_OFF_MARKER, replayUpdates } from "../../core/src/acp/session-updates.js";
import type { StoredUiMessage } from "../../core/src/tasks/index.js";

function answer(id: string, text: string): StoredUiMessage {
  return {
    id,
    time: 0,
    role: "assistant",
    kind: "text",
    text,
    partial: false,
    cutOff: true,
    tool: "",
    detail: "",
    checkpointId: "",
    askId: "",
  };
}

function replayedText(text: string): string {
  const [update] = replayUpdates([answer("a1", text)], "/ws");
  return update?.sessionUpdate === "agent_message_chunk" && update.content.type === "text" ? update.content.text : "";
}

describe("a cut-off answer in a replayed session", () => {
  it("closes the code block it stopped in before the marker", () => {
    expect(replayedText("Here:\n```js\nfoo(")).toBe(`Here:\n\`\`\`js\nfoo(\n\`\`\`\n\n${CUT_OFF_MARKER}`);
    expect(replayedText("Here:\n~~~\nline\n")).toBe(`Here:\n~~~\nline\n~~~\n\n${CUT_OFF_MARKER}`);
    // A shorter run inside a longer fence is text of the block, not its end.
    expect(replayedText("````md\n```\ninner")).toBe(`\`\`\`\`md\n\`\`\`\ninner\n\`\`\`\`\n\n${CUT_OFF_MARKER}`);
  });

  it("adds nothing but the marker after an answer whose code blocks are closed", () => {
    expect(replayedText("Run:\n```sh\nls\n```\nthen wait")).toBe(
      `Run:\n\`\`\`sh\nls\n\`\`\`\nthen wait\n\n${CUT_OFF_MARKER}`,
    );
    expect(replayedText("Inline ```code``` only")).toBe(`Inline \`\`\`code\`\`\` only\n\n${CUT_OFF_MARKER}`);
  });
});
