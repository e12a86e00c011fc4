/**
 * The cross-client conformance scenario (test/conformance/scenario.ts) played through the
 * extension, the way a person would in VS Code: New Task, Approve (the follow-up answered with
 * its first option), Compare with the baseline checkpoint, Restore Files Only, then Edit the
 * last message sent with Restore All; in a second session, delete the task from history.
 * test/vscode/conformance-driver.ts runs it and snapshots what it left.
 *
 * Environment: DLINE_CONFORMANCE_PHASE ("play" | "delete"), DLINE_CONFORMANCE_SCENARIO (JSON
 * file: prompt, editedAnswer, model, testKey), DLINE_CONFORMANCE_MODEL_URL,
 * DLINE_CONFORMANCE_TASK (for "delete").
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { CheckpointKind } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import type { ShownDiff } from "../checkpoints/diff-presenter.js";
import { activateDline, addOpenAiProfile, required } from "./helpers.js";
import { assert, waitFor, type TestSuite } from "./runner.js";

/** The profile the CLI derives from OPENAI_BASE_URL / OPENAI_MODEL / OPENAI_API_KEY. */
const PROFILE_ID = "env-openai";

interface ScenarioFile {
  prompt: string;
  editedAnswer: string;
  model: string;
  testKey: string;
}

export function defineConformanceSuite(suite: TestSuite, outDir: string): void {
  const phase = required("DLINE_CONFORMANCE_PHASE");
  const scenario = JSON.parse(fs.readFileSync(required("DLINE_CONFORMANCE_SCENARIO"), "utf8")) as ScenarioFile;
  const resultFile = path.join(outDir, "conformance-result.json");

  if (phase === "play") {
    suite.test("plays the conformance scenario through the extension", async () => {
      const api = await activateDline();
      const clients = await api.clients();
      await addOpenAiProfile(
        clients,
        {
          id: PROFILE_ID,
          name: "OpenAI-compatible (from environment)",
          baseUrl: required("DLINE_CONFORMANCE_MODEL_URL"),
          model: scenario.model,
          contextWindow: 128_000n,
        },
        scenario.testKey,
      );

      const taskId = (await vscode.commands.executeCommand<string>("dline.newTask", scenario.prompt, PROFILE_ID)) ?? "";
      assert(taskId, "dline.newTask returned no task id");
      // Approve every ask; a follow-up question gets its first option.
      const answered = new Set<string>();
      await waitFor(
        "the task to complete",
        async () => {
          const state = api.chat.state();
          const ask = state.pendingAsk;
          if (ask && !answered.has(ask.askId)) {
            answered.add(ask.askId);
            await vscode.commands.executeCommand(
              "dline.approve",
              ask.kind === "followup" ? (ask.options[0] ?? "") : "",
            );
          }
          return state.status === "completed";
        },
        120_000,
      );

      const checkpoints = (await clients.checkpoints.listCheckpoints({ taskId })).checkpoints;
      const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE);
      assert(baseline, "no baseline checkpoint");
      const shown = (await vscode.commands.executeCommand<ShownDiff[]>("dline.compare", baseline.id)) ?? [];
      const compare = shown
        .map((d) => ({ path: d.path, status: d.status }))
        .sort((a, b) => a.path.localeCompare(b.path));
      assert(
        await vscode.commands.executeCommand<boolean>("dline.restore", baseline.id, "files"),
        "Restore Files Only did nothing",
      );

      const mine = api.chat
        .state()
        .items.filter((i) => i.type === "message" && i.role === "user" && i.kind === "text" && i.text !== "");
      const last = mine[mine.length - 1];
      assert(last && last.type === "message", "no user message to edit");
      await vscode.commands.executeCommand<boolean>("dline.editMessage", last.id, scenario.editedAnswer, "all");
      fs.writeFileSync(resultFile, JSON.stringify({ taskId, compare }));
    });
  } else if (phase === "delete") {
    suite.test("deletes the scenario's task from history", async () => {
      const api = await activateDline();
      const taskId = required("DLINE_CONFORMANCE_TASK");
      await waitFor("the task in history", async () => (await api.history.list()).some((t) => t.id === taskId));
      await vscode.commands.executeCommand("dline.history.delete", taskId, "confirmed");
      await waitFor("the task gone from history", async () => !(await api.history.list()).some((t) => t.id === taskId));
      fs.writeFileSync(resultFile, JSON.stringify({ deleted: taskId }));
    });
  } else {
    throw new Error(`unknown DLINE_CONFORMANCE_PHASE ${phase}`);
  }
}
