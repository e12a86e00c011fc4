/**
 * The VS Code extension, end to end in a real VS Code: code-server (from npm) serves the
 * workbench, headless Chromium (playwright-core) opens it with a payload that loads
 * adapters/vscode as the extension under development and runs its suite
 * (adapters/vscode/src/test/index.ts) in the extension host, against the real sidecar binary
 * and the scripted model server. The suite asks this harness to click, read and screenshot the
 * page through files (src/test/ui-bridge.ts). Output (results, logs, screenshot) goes to
 * test-output/vscode/.
 *
 * Needs: bash scripts/setup-vscode-test.sh (npm test runs it through scripts/setup-test.sh). When the
 * tools are missing this test fails with that instruction; it never skips.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeTestRoots, repoRoot } from "../helpers/sidecar.js";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import type { ModelServerScript } from "../model-server/script.js";
import { runExtensionSuite } from "./workbench-run.js";

const API_KEY = "sk-test-SECRET-vscode-0123456789";
const OUT = path.join(repoRoot, "test-output", "vscode");

/** The model's side of the suite's task (see the suite for what each step checks). */
const script: ModelServerScript = {
  apiKey: API_KEY,
  turns: [
    {
      text: "I will update the greeting in hello.txt.",
      toolCalls: [{ name: "replace_in_file", input: { path: "hello.txt", diff: "------- SEARCH\nhello\n=======\nhello, world\n+++++++ REPLACE" } }],
      usage: { input: 100, output: 20 },
    },
    { text: "Adding notes.", toolCalls: [{ name: "write_to_file", input: { path: "notes.md", content: "# Notes\ncreated by dline\n" } }], usage: { input: 150, output: 20 } },
    { text: "Done.", toolCalls: [{ name: "attempt_completion", input: { result: "Greeting updated and notes added." } }], usage: { input: 200, output: 5 } },
    // After "Restore Chat" on the first message the task continues with the edited text.
    { text: "Politely done.", toolCalls: [{ name: "attempt_completion", input: { result: "Greeted politely." } }] },
    // A second task, for Delete All History → Delete Everything.
    { text: "Hi.", toolCalls: [{ name: "attempt_completion", input: { result: "Said hi." } }] },
    // Cancel in the chat while the model streams, then Resume.
    { text: "Thinking very slowly about it", textChunkChars: 4, interrupt: { afterFrames: 3, mode: "stall" } },
    { text: "Back.", toolCalls: [{ name: "attempt_completion", input: { result: "Finished after cancel." } }] },
    // The core is killed while the model streams: the task reopens interrupted, Resume finishes it.
    { text: "Slow thoughts again", textChunkChars: 4, interrupt: { afterFrames: 3, mode: "stall" } },
    { text: "Resumed.", toolCalls: [{ name: "attempt_completion", input: { result: "Finished after resume." } }] },
    { text: "Spare." },
  ],
};

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

describe("VS Code extension in a real VS Code (code-server + Chromium)", () => {
  it("runs the extension's end-to-end suite in the extension host", { timeout: 600_000 }, async () => {
    const roots = makeTestRoots("dline-vscode-e2e-");
    const workspace = path.join(roots.base, "project");
    fs.mkdirSync(path.join(workspace, "src"), { recursive: true });
    fs.writeFileSync(path.join(workspace, "hello.txt"), "hello\n");
    fs.writeFileSync(path.join(workspace, "src", "app.txt"), "app v1\n");
    execFileSync("git", ["init", "-q"], { cwd: workspace });

    const model: ModelServerProcess = await spawnModelServer(script);
    cleanups.push(() => model.stop());
    const run = await runExtensionSuite({
      suite: "e2e",
      base: roots.base,
      workspace,
      env: roots.env,
      outDir: OUT,
      extraEnv: { DLINE_E2E_MODEL_URL: model.url, DLINE_E2E_API_KEY: API_KEY },
    });

    expect(run.results.length, `no results: see ${OUT} and ${run.codeServerLog}`).toBeGreaterThanOrEqual(20);
    expect(run.results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.error?.split("\n")[0]}`)).toEqual([]);
    expect(run.exitCode).toBe(0);
    expect(fs.existsSync(path.join(OUT, "chat-mid-task.png"))).toBe(true);
    // Restore Chat sent the edited text to the model.
    const bodies = (await model.requests()).map((r) => JSON.stringify(r.body));
    expect(bodies.some((b) => b.includes("Greet the world politely"))).toBe(true);
    fs.rmSync(roots.base, { recursive: true, force: true }); // kept when the test fails, for a look
  });

  it("shows the checkpoint limit of a home-folder workspace in the chat header", { timeout: 300_000 }, async () => {
    const roots = makeTestRoots("dline-vscode-limits-");
    const run = await runExtensionSuite({ suite: "limits", base: roots.base, workspace: roots.home, env: roots.env, outDir: path.join(OUT, "..", "vscode-limits") });
    expect(run.results.map((r) => [r.name, r.ok, r.error?.split("\n")[0]])).toEqual([
      ["the home folder as workspace: the chat header says checkpoints cannot be used there", true, undefined],
    ]);
    expect(run.exitCode).toBe(0);
    fs.rmSync(roots.base, { recursive: true, force: true });
  });
});
