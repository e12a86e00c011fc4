/**
 * The VS Code driver of the cross-client conformance suite (test/conformance): the scenario
 * played through the extension in a real VS Code (adapters/vscode/src/test/conformance-suite.ts,
 * run by runExtensionSuite), one code-server session to play it and one to delete the task.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { repoRoot } from "../helpers/sidecar.js";
import type { ComparedFile, Driver, DriverContext, DriverResult } from "../conformance/drivers/driver.js";
import { MODEL, scenario, TEST_KEY } from "../conformance/scenario.js";
import { runExtensionSuite } from "./workbench-run.js";

async function runPhase(
  ctx: DriverContext,
  phase: "play" | "delete",
  extra: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const scenarioFile = path.join(ctx.roots.base, "vscode-scenario.json");
  fs.writeFileSync(scenarioFile, JSON.stringify({ ...scenario, model: MODEL, testKey: TEST_KEY }));
  const outDir = path.join(repoRoot, "test-output", "vscode-conformance", phase);
  const run = await runExtensionSuite({
    suite: "conformance",
    base: path.join(ctx.roots.base, "vscode"),
    workspace: ctx.workspace,
    env: ctx.roots.env,
    outDir,
    extraEnv: {
      DLINE_CONFORMANCE_PHASE: phase,
      DLINE_CONFORMANCE_SCENARIO: scenarioFile,
      DLINE_CONFORMANCE_MODEL_URL: ctx.modelUrl,
      ...extra,
    },
    timeoutMs: 240_000,
  });
  const failed = run.results.filter((r) => !r.ok);
  if (run.exitCode !== 0 || failed.length > 0 || run.results.length === 0) {
    throw new Error(
      `the VS Code driver (${phase}) failed (exit ${run.exitCode}): ${failed.map((f) => f.error).join("\n") || `see ${outDir}`}`,
    );
  }
  return JSON.parse(fs.readFileSync(path.join(outDir, "conformance-result.json"), "utf8")) as Record<string, unknown>;
}

export const vscodeDriver: Driver = {
  name: "vscode",
  async play(ctx): Promise<DriverResult> {
    const result = await runPhase(ctx, "play");
    return { taskId: String(result.taskId), compare: result.compare as ComparedFile[] };
  },
  async deleteTask(ctx, taskId) {
    await runPhase(ctx, "delete", { DLINE_CONFORMANCE_TASK: taskId });
  },
};
