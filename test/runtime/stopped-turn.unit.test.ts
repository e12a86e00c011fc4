import { describe, expect, it } from "vitest";
import { JOURNAL_KIND } from "../../core/src/runtime/conversation.js";
import {
  INTERRUPTED_CALL_RESULT,
  NOT_RUN_AFTER_INTERRUPTION,
  settledWithoutRerun,
  stoppedTurn,
  TOOL_CALL_PROGRESS,
  type ToolCallProgress,
} from "../../core/src/runtime/stopped-turn.js";

let seq = 0;
const entry = (kind: string, data: object) => ({ seq: ++seq, kind, data: JSON.stringify(data) });
const answer = (...ids: string[]) =>
  entry(JOURNAL_KIND.assistant, {
    content: ids.map((id) => ({ type: "tool_use", id, name: "write_to_file", input: { path: `${id}.txt` } })),
  });
const step = (p: ToolCallProgress) => entry(TOOL_CALL_PROGRESS, p);
const user = entry(JOURNAL_KIND.user, { text: "go" });

describe("what each call of a stopped turn gets", () => {
  it("no stopped turn when the last answer's calls have their results, or it called none", () => {
    expect(stoppedTurn([user, answer("a"), entry(JOURNAL_KIND.toolResults, { results: [] })])).toBeUndefined();
    expect(
      stoppedTurn([user, entry(JOURNAL_KIND.assistant, { content: [{ type: "text", text: "hi" }] })]),
    ).toBeUndefined();
  });

  it("ended calls keep their results; the one asked and not started runs again, with every call after it", () => {
    const turn = stoppedTurn([
      user,
      answer("a", "b", "c"),
      step({ toolUseId: "a", step: "started", feedback: "The user approved with feedback: fine" }),
      step({ toolUseId: "a", step: "ended", content: "wrote a.txt" }),
      step({ toolUseId: "b", step: "asked" }),
    ])!;
    expect(turn.results).toEqual([{ toolUseId: "a", content: "wrote a.txt", isError: undefined }]);
    expect(turn.notStarted.map((c) => c.id)).toEqual(["b", "c"]);
    expect(turn.notStarted[0]!.input).toEqual({ path: "b.txt" });
    expect(turn.feedback).toBe("The user approved with feedback: fine");
    // A new message instead of Resume: the calls not run say so.
    expect(settledWithoutRerun(turn).results.map((r) => [r.toolUseId, r.isError])).toEqual([
      ["a", undefined],
      ["b", true],
      ["c", true],
    ]);
  });

  it("a call that started and did not end is interrupted, and never runs again; the calls after it are not run", () => {
    const turn = stoppedTurn([
      user,
      answer("a", "b"),
      step({ toolUseId: "a", step: "asked" }),
      step({ toolUseId: "a", step: "started" }),
    ])!;
    expect(turn.notStarted).toEqual([]);
    expect(turn.results.map((r) => r.content)).toEqual([INTERRUPTED_CALL_RESULT, NOT_RUN_AFTER_INTERRUPTION]);
  });

  it("calls with no progress at all (an earlier version's task, an imported one) are interrupted, not run again", () => {
    const turn = stoppedTurn([user, answer("a")])!;
    expect(turn.notStarted).toEqual([]);
    expect(turn.results.map((r) => r.content)).toEqual([INTERRUPTED_CALL_RESULT]);
  });

  it("progress of an earlier turn does not count for this one", () => {
    const turn = stoppedTurn([user, step({ toolUseId: "a", step: "asked" }), answer("a")])!;
    expect(turn.notStarted).toEqual([]);
  });
});
