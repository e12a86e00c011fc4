/**
 * The VS Code chat model folds every recorded event stream of test/conformance/fold to the
 * chat state the core itself has at the end of it (the same fixtures the Neovim and Kotlin
 * folds pass in their own suites).
 */
import { fromJson } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { TaskEventSchema } from "../../core/src/gen/dline/v1/task_pb.js";
import { ChatModel } from "../../adapters/vscode/src/chat/chat-model.js";
import { readFixtures } from "../conformance/fold/chat-fixture.js";
import { viewOfChatState } from "./chat-view.js";

describe("VS Code chat model: the conformance event streams", () => {
  const fixtures = readFixtures();
  it("has the recorded fixtures", () => {
    expect(fixtures.map((f) => f.name)).toEqual(
      expect.arrayContaining([
        "streaming",
        "approvals-with-edits",
        "denial-with-feedback",
        "restore-with-rewind",
        "sidecar-restart-interrupted",
        "compaction",
      ]),
    );
  });
  for (const fixture of fixtures) {
    it(`${fixture.name}: ${fixture.about}`, () => {
      const model = new ChatModel();
      for (const e of fixture.events) model.apply(fromJson(TaskEventSchema, e as never));
      expect(viewOfChatState(model.snapshot)).toEqual(fixture.expected);
    });
  }
});
