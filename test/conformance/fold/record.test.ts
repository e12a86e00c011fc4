/**
 * Records the chat-fold fixtures from the real sidecar and checks them against what it does
 * today: each scenario is played live, its event stream folded by the VS Code chat model must
 * give the core's own view of the task (GetTask), and the committed fixture must describe the
 * same behaviour (the same view, ids aside). DLINE_UPDATE_FOLD_FIXTURES=1 rewrites the fixtures
 * from the live recordings.
 */
import { fromJson } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { TaskEventSchema } from "../../../core/src/gen/dline/v1/task_pb.js";
import { ChatModel } from "../../../adapters/vscode/src/chat/chat-model.js";
import { viewOfChatState } from "../../vscode/chat-view.js";
import { fixtureOf, normalizedView, readFixtures, writeFixture, viewOfTask } from "./chat-fixture.js";
import { scenarios } from "./scenarios.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

const update = process.env.DLINE_UPDATE_FOLD_FIXTURES === "1";

describe("chat-fold fixtures, recorded from the real sidecar", () => {
  const committed = new Map(update ? [] : readFixtures().map((f) => [f.name, f]));
  it("has a fixture for every scenario", () => {
    if (update) return;
    expect([...committed.keys()].sort()).toEqual(scenarios.map((s) => s.name).sort());
  });

  for (const scenario of scenarios) {
    it(
      `${scenario.name}: the live stream folds to the core's view, and the fixture describes the same`,
      { timeout: 120_000 },
      async () => {
        const { events, task } = await scenario.play(cleanups);
        const fixture = fixtureOf(scenario.name, scenario.about, events, task);
        const model = new ChatModel();
        model.reset(task.task?.id);
        for (const e of fixture.events) model.apply(fromJson(TaskEventSchema, e as never));
        expect(viewOfChatState(model.snapshot)).toEqual(fixture.expected);
        if (update) return writeFixture(fixture);
        const stored = committed.get(scenario.name);
        expect(stored, `test/conformance/fold/fixtures/${scenario.name}.json`).toBeDefined();
        expect(normalizedView(stored!.expected)).toEqual(normalizedView(viewOfTask(task)));
      },
    );
  }
});
