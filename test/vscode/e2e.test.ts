/**
 * The VS Code extension, end to end in a real VS Code: the VSIX made by the release script is
 * installed into code-server (from npm), which serves the workbench; headless Chromium
 * (playwright-core) opens it with a payload that runs the suite (adapters/vscode/src/test) in
 * the extension host, against the sidecar inside the VSIX and the scripted model server. The
 * suite asks this harness to click, read, evaluate and screenshot the page through files
 * (src/test/ui-bridge.ts). Output (results, logs, screenshots of each view in the light and the
 * dark theme) goes to test-output/vscode and test-output/vscode-core-problem.
 *
 * Needs: bash scripts/setup-vscode-test.sh (npm test runs it through scripts/setup-test.sh). When the
 * tools are missing this test fails with that instruction; it never skips.
 */
import { execFile, execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import type { Frame, Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { makeTestRoots, repoRoot } from "../helpers/sidecar.js";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import type { ModelServerScript } from "../model-server/script.js";
import { LARGE_EDIT, LARGE_FILE, LARGE_FILE_TEXT } from "../../adapters/vscode/src/test/large-edit-script.js";
import {
  LONG_ANSWER_END,
  READING_NOTES,
  READING_NOTES_TEXT,
  WIDE_TABLE,
} from "../../adapters/vscode/src/test/reading-history-script.js";
import { cliEnv } from "../helpers/cli-child.js";
import { TEST_KEY } from "../runtime/harness.js";
import { openAsPerson, runExtensionSuite, type SuiteRun } from "./workbench-run.js";
import { buildDriver, holding, runDriver } from "../checkpoints/driver-process.js";
import type { Sandbox } from "../checkpoints/helpers.js";
import { webviewFrames } from "./code-server.js";

const API_KEY = "sk-test-SECRET-vscode-0123456789";
const OUT = path.join(repoRoot, "test-output", "vscode");

/** The model's side of the suite's tasks, in the order the suite asks (see the suite for what each step checks). */
const script: ModelServerScript = {
  apiKey: API_KEY,
  turns: [
    {
      // Markdown the chat renders as elements; its raw HTML must stay text.
      text: 'I will **update** the greeting in `hello.txt`:\n\n```js\nconst greeting = "hello, world";\n```\n\n- one\n- two\n\n<img src=x onerror=alert(1)> <script>alert(2)</script>',
      toolCalls: [
        {
          name: "replace_in_file",
          input: { path: "hello.txt", diff: "------- SEARCH\nhello\n=======\nhello, world\n+++++++ REPLACE" },
        },
      ],
      usage: { input: 100, output: 20 },
    },
    {
      text: "Adding notes.",
      toolCalls: [{ name: "write_to_file", input: { path: "notes.md", content: "# Notes\ncreated by dline\n" } }],
      usage: { input: 150, output: 20 },
    },
    {
      text: "Done.",
      toolCalls: [{ name: "attempt_completion", input: { result: "Greeting updated and notes added." } }],
      usage: { input: 200, output: 5 },
    },
    // After "Restore Chat" on the first message the task continues with the edited text.
    { text: "Politely done.", toolCalls: [{ name: "attempt_completion", input: { result: "Greeted politely." } }] },
    // "Tidy up": a command with an escape sequence in it, rejected with feedback; the model answers the denial.
    {
      text: "I'll clean the build folder.",
      toolCalls: [
        { name: "execute_command", input: { command: "echo tidy\u001b[2K > /dev/null", requires_approval: true } },
      ],
    },
    {
      text: "Understood, I will not run it.",
      toolCalls: [{ name: "attempt_completion", input: { result: "Left the build folder alone." } }],
    },
    // "Add a footer" with edits auto-approved from the chat.
    {
      text: "Adding a footer.",
      toolCalls: [{ name: "write_to_file", input: { path: "footer.txt", content: "-- footer --\n" } }],
      usage: { input: 300, output: 10 },
    },
    { text: "Footer added.", toolCalls: [{ name: "attempt_completion", input: { result: "footer.txt created." } }] },
    // "Fail first": the scripted profile's request is refused; Retry with the backup model answers.
    { status: 401, errorMessage: "invalid api key for this model" },
    {
      text: "Answered by the backup model.",
      toolCalls: [{ name: "attempt_completion", input: { result: "Done with the backup." } }],
    },
    // "Touch the draft": the editor has draft.txt unsaved, so the core refuses the edit; the model reads why.
    {
      text: "Editing the draft.",
      toolCalls: [{ name: "write_to_file", input: { path: "draft.txt", content: "rewritten\n" } }],
    },
    {
      text: "You are editing it; I left it.",
      toolCalls: [{ name: "attempt_completion", input: { result: "draft.txt left alone." } }],
    },
    // A second task, for Delete All History → Delete Everything.
    { text: "Hi.", toolCalls: [{ name: "attempt_completion", input: { result: "Said hi." } }] },
    // Cancel in the chat while the model streams, then Resume.
    { text: "Thinking very slowly about it", textChunkChars: 4, interrupt: { afterFrames: 3, mode: "stall" } },
    { text: "Back.", toolCalls: [{ name: "attempt_completion", input: { result: "Finished after cancel." } }] },
    // The core is killed while a command runs: the task reopens interrupted, Resume finishes it.
    {
      text: "Running the long job.",
      toolCalls: [{ name: "execute_command", input: { command: "sleep 30", requires_approval: false } }],
    },
    { text: "Resumed.", toolCalls: [{ name: "attempt_completion", input: { result: "Finished after resume." } }] },
    { text: "Spare." },
  ],
};

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

/** A git project in fresh roots, holding these files. */
function gitProject(prefix: string, files: Record<string, string | Buffer>) {
  const roots = makeTestRoots(prefix);
  const workspace = path.join(roots.base, "project");
  fs.mkdirSync(workspace, { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(workspace, name)), { recursive: true });
    fs.writeFileSync(path.join(workspace, name), content);
  }
  execFileSync("git", ["init", "-q"], { cwd: workspace });
  return { roots, workspace };
}

/** Runs a suite in a project against the scripted model, whose address and key the suite reads. */
async function runAgainstModel(
  suite: string,
  project: ReturnType<typeof gitProject>,
  model: ModelServerProcess,
  outDir: string,
  more: Pick<Parameters<typeof runExtensionSuite>[0], "timeoutMs" | "userSettings" | "outside"> = {},
): Promise<SuiteRun> {
  return runExtensionSuite({
    suite,
    base: project.roots.base,
    workspace: project.workspace,
    env: project.roots.env,
    outDir,
    extraEnv: { DLINE_E2E_MODEL_URL: model.url, DLINE_E2E_API_KEY: API_KEY },
    ...more,
  });
}

/** Each test's outcome: its name (up to a ":" when `shortNames`), whether it passed, its error's first line. */
function outcomes(run: SuiteRun, shortNames = false) {
  return run.results.map((r) => [shortNames ? r.name.split(":")[0] : r.name, r.ok, r.error?.split("\n")[0]]);
}

function expectScreenshots(outDir: string, names: string[]): void {
  for (const name of names) expect(fs.existsSync(path.join(outDir, `${name}.png`)), name).toBe(true);
}

describe("VS Code extension in a real VS Code (code-server + Chromium)", () => {
  it("runs the extension's end-to-end suite in the extension host", { timeout: 1_200_000 }, async () => {
    const project = gitProject("dline-vscode-e2e-", { "hello.txt": "hello\n", "src/app.txt": "app v1\n" });
    const model: ModelServerProcess = await spawnModelServer(script);
    cleanups.push(() => model.stop());
    const run = await runAgainstModel("e2e", project, model, OUT, {
      timeoutMs: 1_080_000,
      // In a browser VS Code saves edits after a delay by default: off, so a file can stay unsaved.
      userSettings: { "files.autoSave": "off" },
    });

    expect(run.results.length, `no results: see ${OUT} and ${run.codeServerLog}`).toBeGreaterThanOrEqual(29);
    expect(run.results.filter((r) => !r.ok).map((r) => `${r.name}: ${r.error?.split("\n")[0]}`)).toEqual([]);
    expect(run.exitCode).toBe(0);
    for (const view of [
      "welcome",
      "no-model",
      "model-form",
      "approval",
      "completed",
      "command-approval",
      "denied",
      "auto-approve",
      "history",
      "history-confirm",
      "failed",
      "interrupted",
    ]) {
      for (const theme of ["light", "dark"])
        expect(fs.existsSync(path.join(OUT, `${view}-${theme}.png`)), `${view}-${theme}.png`).toBe(true);
    }
    // Restore Chat sent the edited text to the model.
    const bodies = (await model.requests()).map((r) => JSON.stringify(r.body));
    expect(bodies.some((b) => b.includes("Greet the world politely"))).toBe(true);
    fs.rmSync(project.roots.base, { recursive: true, force: true }); // kept when the test fails, for a look
  });

  it(
    "says which file a restore kept as it was; an approval answered while its diff opens closes it",
    { timeout: 400_000 },
    async () => {
      const project = gitProject("dline-vscode-restore-notices-", {
        "notes.md": "# notes\n",
        // Over 4 times the 5 MB a checkpoint holds: the baseline leaves it out and no version of it is kept.
        "big.bin": Buffer.alloc(21 * 1024 * 1024, 120),
        // Over the 256 KiB an approval carries whole: its change comes as a unified diff.
        [LARGE_FILE]: LARGE_FILE_TEXT,
      });
      const model = await spawnModelServer({
        apiKey: API_KEY,
        turns: [
          {
            toolCalls: [
              { name: "write_to_file", input: { path: "big.bin", content: "now small\n" } },
              { name: "write_to_file", input: { path: "notes.md", content: "# notes, edited\n" } },
            ],
          },
          { toolCalls: [{ name: "attempt_completion", input: { result: "Both rewritten." } }] },
          {
            toolCalls: Array.from({ length: 3 }, (_, i) => ({
              name: "write_to_file",
              input: { path: `part-${i + 1}.md`, content: `# part ${i + 1}\n` },
            })),
          },
          { toolCalls: [{ name: "attempt_completion", input: { result: "Three parts written." } }] },
          {
            toolCalls: [
              {
                name: "replace_in_file",
                input: {
                  path: LARGE_FILE,
                  diff: `------- SEARCH\n${LARGE_EDIT.search}\n=======\n${LARGE_EDIT.replace}\n+++++++ REPLACE`,
                },
              },
            ],
          },
          { toolCalls: [{ name: "attempt_completion", input: { result: "Line 2000 fixed." } }] },
          {
            toolCalls: [
              {
                name: "execute_command",
                input: {
                  command:
                    "end=$(( $(date +%s) + 60 )); while [ $(date +%s) -lt $end ]; do echo tick >> ticks.txt; sleep 0.005; done",
                  requires_approval: true,
                },
              },
            ],
          },
        ],
      });
      cleanups.push(() => model.stop());
      const out = path.join(OUT, "..", "vscode-restore-notices");
      const run = await runAgainstModel("restore-notices", project, model, out);
      expect(outcomes(run)).toEqual([
        ["Restore Files Only names the file it kept as it was (too large to snapshot)", true, undefined],
        ["an approval answered while its diff is still opening closes that diff", true, undefined],
        ["an edit of a file too large to send whole opens side by side, rebuilt from its diff", true, undefined],
        ["a restore of the task while its command runs stops the task first, and says so", true, undefined],
      ]);
      expect(run.exitCode).toBe(0);
      expectScreenshots(out, [
        "restore-kept",
        "approval-diff-opening",
        "approval-diff-closed",
        "approval-large-file-diff",
        "restore-running",
      ]);
      fs.rmSync(project.roots.base, { recursive: true, force: true });
    },
  );

  it("an approval asked again after its file changed on disk says why on its card", { timeout: 300_000 }, async () => {
    const project = gitProject("dline-vscode-asked-again-", { "notes.md": "# notes\n" });
    const model = await spawnModelServer({
      apiKey: API_KEY,
      turns: [
        {
          toolCalls: [
            {
              name: "replace_in_file",
              input: { path: "notes.md", diff: "------- SEARCH\n# notes\n=======\n# Notes\n+++++++ REPLACE" },
            },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "Notes retitled." } }] },
      ],
    });
    cleanups.push(() => model.stop());
    const out = path.join(OUT, "..", "vscode-asked-again");
    const run = await runAgainstModel("asked-again", project, model, out);
    expect(outcomes(run)).toEqual([
      ["an approval asked again after its file changed on disk says why on its card", true, undefined],
    ]);
    expect(run.exitCode).toBe(0);
    expectScreenshots(out, ["approval-asked-again"]);
    fs.rmSync(project.roots.base, { recursive: true, force: true });
  });

  it(
    "the checkpoint pick says which checkpoint is which; View Changes and Compare list what a tool changed inside a nested repository and the permissions a command changed; Compare names a change the checkpoints do not track, also when it is the only one; each completion card's View Changes shows its own completion's changes",
    { timeout: 400_000 },
    async () => {
      const project = gitProject("dline-vscode-left-out-", {
        "notes.md": "# notes\n",
        // Over the 5 MB a checkpoint holds: the baseline leaves it out (its content there is unknown).
        "data.txt": "x".repeat(6 * 1024 * 1024),
        // A nested repository: no snapshot holds its files.
        "vendor/lib/lib.c": "int lib = 1;\n",
        // A private key (0600) and a script: the command opens the one and makes the other executable.
        "id.key": "private\n",
        "run.sh": "echo run\n",
      });
      fs.chmodSync(path.join(project.workspace, "id.key"), 0o600);
      execFileSync("git", ["init", "-q"], { cwd: path.join(project.workspace, "vendor", "lib") });
      const model = await spawnModelServer({
        apiKey: API_KEY,
        turns: [
          { toolCalls: [{ name: "write_to_file", input: { path: "notes.md", content: "# notes, edited\n" } }] },
          // A command shrinks it: now a snapshot would hold it, but the checkpoint has no version of it.
          {
            toolCalls: [
              {
                name: "execute_command",
                input: {
                  command: "printf 'small\\n' > data.txt && chmod 644 id.key && chmod +x run.sh",
                  requires_approval: true,
                },
              },
            ],
          },
          // Inside the nested repository: View Changes and Compare list them from their pre-images.
          { toolCalls: [{ name: "write_to_file", input: { path: "vendor/lib/lib.c", content: "int lib = 2;\n" } }] },
          { toolCalls: [{ name: "write_to_file", input: { path: "vendor/lib/made.c", content: "int made;\n" } }] },
          { toolCalls: [{ name: "attempt_completion", input: { result: "Noted and shrunk." } }] },
          // Another task completes twice: a.txt "one"; then, after a follow-up, a.txt "two" and b.txt.
          { toolCalls: [{ name: "write_to_file", input: { path: "a.txt", content: "one\n" } }] },
          { toolCalls: [{ name: "attempt_completion", input: { result: "a.txt written." } }] },
          {
            toolCalls: [
              { name: "write_to_file", input: { path: "a.txt", content: "two\n" } },
              { name: "write_to_file", input: { path: "b.txt", content: "new\n" } },
            ],
          },
          { toolCalls: [{ name: "attempt_completion", input: { result: "a.txt changed, b.txt added." } }] },
        ],
      });
      cleanups.push(() => model.stop());
      const out = path.join(OUT, "..", "vscode-left-out");
      const run = await runAgainstModel("left-out", project, model, out);
      expect(outcomes(run, true)).toEqual([
        [
          "the Restore which checkpoint? quick pick says when, what and how many files of each checkpoint, the id beside",
          true,
          undefined,
        ],
        [
          "View Changes lists what the task's tools changed or made inside a nested repository, and the permissions a command changed",
          true,
          undefined,
        ],
        [
          "Compare lists a change the checkpoints do not track by a name that says so, not as an empty side, and a change of permissions; after a restore that left it, never 'no changes'",
          true,
          undefined,
        ],
        [
          "View Changes under each completion card of a task that completed twice shows that completion's own changes",
          true,
          undefined,
        ],
      ]);
      expect(run.exitCode).toBe(0);
      expectScreenshots(out, [
        "checkpoint-pick",
        "view-changes-nested",
        "compare-not-tracked",
        "compare-only-not-tracked",
        "view-changes-first-completion",
      ]);
      fs.rmSync(project.roots.base, { recursive: true, force: true });
    },
  );

  it(
    "checkpoints whose index the core rebuilt say so once, in an information notification naming where the damaged files were kept; a Compare or Restore waiting for another Dline window holding the checkpoints says so once, naming its process, until it goes on",
    { timeout: 400_000 },
    async () => {
      const project = gitProject("dline-vscode-checkpoint-repair-", { "notes.md": "# notes\n" });
      const done = { toolCalls: [{ name: "attempt_completion", input: { result: "Done." } }] };
      const model = await spawnModelServer({
        apiKey: API_KEY,
        turns: [
          done,
          done,
          done,
          // A fourth task edits a file: its checkpoint has a Compare in the chat.
          { toolCalls: [{ name: "write_to_file", input: { path: "notes.md", content: "# notes, edited\n" } }] },
          done,
        ],
      });
      cleanups.push(() => model.stop());
      // A first task (the CLI) makes the workspace's shadow repository; then its index is damaged.
      const env = cliEnv(project.roots, model, { OPENAI_API_KEY: API_KEY });
      await promisify(execFile)(
        path.join(repoRoot, "dist", "dline"),
        ["task", "First", "--workspace", project.workspace, "--yes"],
        { env },
      );
      const checkpoints = path.join(project.roots.docsDir, "checkpoints");
      const repos = fs.readdirSync(checkpoints);
      expect(repos).toHaveLength(1);
      for (const repo of repos) fs.writeFileSync(path.join(checkpoints, repo, ".git", "index"), "not an index");

      // Another Dline window over the same roots and workspace (a separate process, the checkpoint
      // tests' driver) takes the workspace's checkpoint lock when the suite asks, until killed.
      await buildDriver();
      let holder: ReturnType<typeof runDriver> | undefined;
      const endHolder = async () => {
        holder?.child.kill("SIGKILL");
        await holder?.done;
        holder = undefined;
      };
      cleanups.push(endHolder);
      const outside = {
        holdCheckpoints: async () => {
          const sandbox = { base: project.roots.base, home: project.roots.home, workspace: project.workspace };
          holder = runDriver(sandbox as Sandbox, "other-window", 0, [], { holdLock: true });
          await holding(holder);
          return [String(holder.child.pid)];
        },
        endHolder: async () => {
          await endHolder();
          return [];
        },
      };

      const out = path.join(OUT, "..", "vscode-checkpoint-repair");
      const run = await runAgainstModel("checkpoint-repair", project, model, out, { outside });
      await endHolder();
      expect(outcomes(run, true)).toEqual([
        [
          "a task after the checkpoint index was damaged tells once, in an information notification, where the damaged files were kept",
          true,
          undefined,
        ],
        [
          "Compare clicked while another Dline window holds the checkpoints says once that it waits for that window, naming its process, until the diff opens; Restore too, until its menu comes; View Changes too, until its diff opens",
          true,
          undefined,
        ],
      ]);
      expect(run.exitCode).toBe(0);
      expectScreenshots(out, [
        "checkpoint-repair-notice",
        "checkpoints-held-elsewhere-light",
        "checkpoints-held-elsewhere-dark",
        "checkpoints-held-elsewhere-diff-open",
        "view-changes-held-elsewhere",
      ]);
      fs.rmSync(project.roots.base, { recursive: true, force: true });
    },
  );

  it(
    "an approval in a long chat shows its step above a full panel; a large edit's notice is plain text; feedback shows once; a file restore asks first, closes a stale Compare and can be undone",
    { timeout: 600_000 },
    async () => {
      const project = gitProject("dline-vscode-approvals-restore-", { "notes.md": "# notes\n" });
      // A long answer first (the chat scrolls), then a file over the 256 KiB the core previews.
      const plan = Array.from({ length: 60 }, (_, i) => `- step ${i + 1} of the plan: write part ${i + 1}`).join("\n");
      const longFile = Array.from({ length: 3000 }, (_, i) => `export const line${i} = "${"x".repeat(80)}";\n`).join(
        "",
      );
      const model = await spawnModelServer({
        apiKey: API_KEY,
        turns: [
          {
            text: `Here is the plan:\n\n${plan}`,
            toolCalls: [{ name: "write_to_file", input: { path: "generated/long.js", content: longFile } }],
          },
          {
            text: "Now a cleanup.",
            toolCalls: [{ name: "execute_command", input: { command: "echo cleanup", requires_approval: true } }],
          },
          { toolCalls: [{ name: "attempt_completion", input: { result: "Wrote it without commands." } }] },
        ],
      });
      cleanups.push(() => model.stop());
      const out = path.join(OUT, "..", "vscode-approvals-restore");
      const run = await runAgainstModel("approvals-restore", project, model, out);
      expect(outcomes(run, true)).toEqual([
        ["an approval in a long chat", true, undefined],
        ["a command rejected with feedback", true, undefined],
        [
          "Restore Files Only asks first, naming the files it overwrites; it closes a Compare opened before; Undo on its notice brings the person's edits back",
          true,
          undefined,
        ],
        ["Restore All on the first message", true, undefined],
      ]);
      expect(run.exitCode).toBe(0);
      // The model heard the reject's feedback.
      const bodies = (await model.requests()).map((r) => JSON.stringify(r.body));
      expect(bodies.some((b) => b.includes("No commands please, just write the file."))).toBe(true);
      expectScreenshots(out, [
        "approval-long-chat",
        "approval-command-long-chat",
        "restore-confirm-refused",
        "restore-undo-notice",
        "restore-all-first-message",
        "restore-undone",
      ]);
      fs.rmSync(project.roots.base, { recursive: true, force: true });
    },
  );

  it(
    "an Undo the core refuses for a while comes back on its notice; Restore Files Only after a file restore says why it is not available; an answer cut off by Cancel is marked, also when it was cut in another client and the task went on",
    { timeout: 600_000 },
    async () => {
      const project = gitProject("dline-vscode-undo-cut-off-", { "notes.md": "# notes\n" });
      const model = await spawnModelServer({
        apiKey: API_KEY,
        turns: [
          // Task A writes a file (restored away, then undone).
          { toolCalls: [{ name: "write_to_file", input: { path: "undo.txt", content: "written by the task\n" } }] },
          { toolCalls: [{ name: "attempt_completion", input: { result: "Wrote it." } }] },
          // Task B waits for approval while Undo is tried, then is rejected and completes.
          { toolCalls: [{ name: "write_to_file", input: { path: "other.txt", content: "other\n" } }] },
          { toolCalls: [{ name: "attempt_completion", input: { result: "Left it." } }] },
          // Task C: cancelled while the model streams, then resumed.
          { text: "Thinking very slowly about it", textChunkChars: 4, interrupt: { afterFrames: 3, mode: "stall" } },
          { text: "Back.", toolCalls: [{ name: "attempt_completion", input: { result: "Finished after cancel." } }] },
          // Task D, in another client of the core: cancelled while the model streams, then "go on".
          { text: "Slowly, elsewhere, at length", textChunkChars: 4, interrupt: { afterFrames: 3, mode: "stall" } },
          { text: "Went on.", toolCalls: [{ name: "attempt_completion", input: { result: "Went on elsewhere." } }] },
        ],
      });
      cleanups.push(() => model.stop());
      const out = path.join(OUT, "..", "vscode-undo-cut-off");
      const run = await runAgainstModel("undo-cut-off", project, model, out);
      expect(outcomes(run, true)).toEqual([
        [
          "after a file restore, More options lists Restore Files Only as already restored, and choosing it says why",
          true,
          undefined,
        ],
        ["Undo refused while another task waits for approval", true, undefined],
        ["an answer cut off by Cancel ends with a marker", true, undefined],
        [
          "an answer cut off in another client, the task continued there, is marked when opened from History in this window",
          true,
          undefined,
        ],
      ]);
      expect(run.exitCode).toBe(0);
      expectScreenshots(out, [
        "restore-menu-files-already-restored",
        "restore-files-only-unavailable-explained",
        "undo-refused-notice-back",
        "undo-after-refusal-done",
        "cut-off-live",
        "cut-off-reopened",
        "cut-off-after-resume-reopened",
        "cut-off-elsewhere-go-on-opened",
      ]);
      fs.rmSync(project.roots.base, { recursive: true, force: true });
    },
  );

  it(
    "a restore over unsaved changes saves them first; a long answer read while it streams; an answer cut at the output limit says so; history by keyboard keeps its search and focus",
    { timeout: 600_000 },
    async () => {
      const project = gitProject("dline-vscode-reading-", {
        [READING_NOTES]: READING_NOTES_TEXT,
        ".gitignore": ".env\n",
        ".env": "LOCAL_PORT=3000\n",
      });
      const sections = Array.from(
        { length: 40 },
        (_, i) =>
          `## Section ${i + 1}\n\nParagraph ${i + 1}: the parser reads each option's flags, then its value, then the next word.\n\n\`\`\`js\nprogram.option("-d, --debug", "step ${i + 1}");\n\`\`\`\n`,
      ).join("\n");
      const model = await spawnModelServer({
        apiKey: API_KEY,
        turns: [
          {
            toolCalls: [
              {
                name: "replace_in_file",
                input: {
                  path: READING_NOTES,
                  diff: "------- SEARCH\n# notes\n=======\n# notes\ntask line\n+++++++ REPLACE",
                },
              },
            ],
          },
          { toolCalls: [{ name: "attempt_completion", input: { result: "Added the task line." } }] },
          // Streams for about 20 s: read while it comes.
          {
            text: `${sections}\n${WIDE_TABLE}\n\n${LONG_ANSWER_END}`,
            textChunkChars: 40,
            writeChunkBytes: 300,
            writeDelayMs: 120,
          },
          { text: "The parser, in short:\n\n1. options\n2. arguments\n3. sub", stopReason: "max_tokens" },
        ],
      });
      cleanups.push(() => model.stop());
      const out = path.join(OUT, "..", "vscode-reading-history");
      const run = await runAgainstModel("reading-history", project, model, out, {
        userSettings: { "files.autoSave": "off" },
      });
      expect(outcomes(run, true)).toEqual([
        ["a file restore saves the unsaved changes of an open file first", true, undefined],
        [
          "Restore All saves the unsaved changes of the files it writes first, and Undo asks before overwriting what was typed since the restore",
          true,
          undefined,
        ],
        ["a long streamed answer", true, undefined],
        ["an answer cut at the model's output limit says so at its marker, and how to go on", true, undefined],
        ["history", true, undefined],
      ]);
      expect(run.exitCode).toBe(0);
      expectScreenshots(out, [
        "restore-unsaved-saved-first",
        "restore-all-unsaved-saved-first",
        "restore-all-kept-env",
        "undo-asks-before-overwriting",
        "long-answer-latest",
        "long-answer-panel-open",
        "wide-table-scrolls",
        "wide-table-scrolled",
        "cut-off-output-limit",
        "history-delete-confirm",
        "history-search-kept-after-delete",
      ]);
      fs.rmSync(project.roots.base, { recursive: true, force: true });
    },
  );

  it(
    "Enter on a modal question gives its safe answer: Undo over the person's changes keeps them, Delete All History keeps the history",
    { timeout: 400_000 },
    async () => {
      // No extension test suite runs in this window (VS Code refuses modal dialogs while one
      // runs): the page is driven from here with the keyboard and the mouse, as a person does.
      const project = gitProject("dline-vscode-enter-", { "notes.md": "# notes\n" });
      const notes = path.join(project.workspace, "notes.md");
      const model = await spawnModelServer({
        apiKey: TEST_KEY,
        turns: [
          { toolCalls: [{ name: "write_to_file", input: { path: "notes.md", content: "# notes\nby the task\n" } }] },
          { toolCalls: [{ name: "attempt_completion", input: { result: "Wrote the notes." } }] },
        ],
      });
      cleanups.push(() => model.stop());
      const env = cliEnv(project.roots, model);
      const cli = (args: string[]) => promisify(execFile)(path.join(repoRoot, "dist", "dline"), args, { env });
      await cli(["task", "Write notes", "--workspace", project.workspace, "--yes"]);
      expect(fs.readFileSync(notes, "utf8")).toBe("# notes\nby the task\n");

      const out = path.join(OUT, "..", "vscode-enter-safe");
      const { page, stop } = await openAsPerson({
        base: project.roots.base,
        workspace: project.workspace,
        env: project.roots.env,
        outDir: out,
      });
      cleanups.push(stop);
      const shot = (name: string) => page.screenshot({ path: path.join(out, `${name}.png`) });
      // What the page showed when a step failed.
      cleanups.push(() => shot("last"));
      await page.locator(".monaco-workbench .part.statusbar").waitFor({ timeout: 60_000 });
      await openTaskFromHistory(page, "Write notes");

      // Restore the start of the task (files and task), confirmed by clicking; its notice offers Undo.
      await palette(page, "Dline: Restore Checkpoint");
      await page.locator(".quick-input-list .monaco-list-row", { hasText: "Start of the task" }).first().click();
      await page.locator(".quick-input-list .monaco-list-row", { hasText: "Restore Files & Task" }).first().click();
      await page.locator(".monaco-dialog-box .monaco-button", { hasText: "Restore Files & Task" }).click();
      await waitUntil("the notes restored", () => fs.readFileSync(notes, "utf8") === "# notes\n");
      // Once the restore's notice offers Undo, the person writes in the notes, then presses Undo: it asks first.
      await palette(page, "Notifications: Show Notifications");
      const undoButton = page.locator(".notification-list-item .monaco-button", { hasText: "Undo" }).first();
      await undoButton.waitFor();
      fs.writeFileSync(notes, "# notes\nmy own words\n");
      await undoButton.click();
      const undoQuestion = await dialog(page, "You changed a file since the restore");
      await shot("undo-question-default");
      await page.keyboard.press("Enter");
      await page.locator(".monaco-dialog-box").waitFor({ state: "detached" });
      // Declined: nothing was written (an Undo takes well under 2 s here), and the restore's notice comes back with its Undo.
      await new Promise((r) => setTimeout(r, 2_000));
      expect(fs.readFileSync(notes, "utf8")).toBe("# notes\nmy own words\n");
      await palette(page, "Notifications: Show Notifications");
      await page.locator(".notification-list-item .monaco-button", { hasText: "Undo" }).first().waitFor();
      expect(undoQuestion).toEqual({ focused: "Keep My Changes", buttons: expect.arrayContaining(["Undo Anyway"]) });

      // Delete All History: Enter deletes nothing.
      await palette(page, "Dline: Delete All History");
      const deleteQuestion = await dialog(page, "Delete all task history?");
      await shot("delete-all-default");
      await page.keyboard.press("Enter");
      await page.locator(".monaco-dialog-box").waitFor({ state: "detached" });
      await new Promise((r) => setTimeout(r, 2_000)); // a delete, had there been one, is done by now
      const { tasks } = JSON.parse((await cli(["--json", "history"])).stdout) as { tasks: { title: string }[] };
      expect(tasks.map((t) => t.title)).toEqual(["Write notes"]);
      expect(deleteQuestion).toEqual({
        focused: "Keep History",
        buttons: expect.arrayContaining(["Delete Everything", "Delete All Except Favorites"]),
      });
      await stop();
      fs.rmSync(project.roots.base, { recursive: true, force: true });
    },
  );

  it(
    "Restore All from the chat asks first, naming the files it overwrites and deletes: Cancel changes nothing, its button restores and keeps the edited text in the input",
    { timeout: 400_000 },
    async () => {
      // hunt59: Restore All overwrote the person's own saved edit and deleted the task's file with
      // no question, only a notice afterwards. Driven from here, as a person does: VS Code refuses
      // modal dialogs while an extension test suite runs.
      const project = gitProject("dline-vscode-restore-all-", { "notes.md": "# notes\n" });
      const notes = path.join(project.workspace, "notes.md");
      const extra = path.join(project.workspace, "extra.md");
      const model = await spawnModelServer({
        apiKey: TEST_KEY,
        turns: [
          { toolCalls: [{ name: "write_to_file", input: { path: "notes.md", content: "# notes\nby the task\n" } }] },
          { toolCalls: [{ name: "write_to_file", input: { path: "extra.md", content: "extra\n" } }] },
          { toolCalls: [{ name: "attempt_completion", input: { result: "Wrote the notes." } }] },
        ],
      });
      cleanups.push(() => model.stop());
      const env = cliEnv(project.roots, model);
      await promisify(execFile)(
        path.join(repoRoot, "dist", "dline"),
        ["task", "Write notes", "--workspace", project.workspace, "--yes"],
        { env },
      );
      // The person's own line, saved, after the task.
      const mine = "# notes\nby the task\nmy line\n";
      fs.writeFileSync(notes, mine);

      const out = path.join(OUT, "..", "vscode-restore-all-question");
      const { page, stop } = await openAsPerson({
        base: project.roots.base,
        workspace: project.workspace,
        env: project.roots.env,
        outDir: out,
      });
      cleanups.push(stop);
      const shot = (name: string) => page.screenshot({ path: path.join(out, `${name}.png`) });
      cleanups.push(() => shot("last"));
      await page.locator(".monaco-workbench .part.statusbar").waitFor({ timeout: 60_000 });
      await openTaskFromHistory(page, "Write notes");
      const chat = await chatFrame(page);
      const edited = "Write better notes";
      const askRestoreAll = async () => {
        await chat.locator(".message.user", { hasText: "Write notes" }).first().click();
        await chat.locator(".edit-box textarea").fill(edited);
        await chat.locator(".edit-box button", { hasText: "Restore All" }).click();
        await dialog(page, "Restore the files and the conversation to before this message?");
        return page.locator(".monaco-dialog-box").innerText();
      };
      const question = await askRestoreAll();
      await shot("restore-all-question");
      expect(question).toContain("This message and the ones after it are deleted");
      expect(question).toContain(
        "it overwrites or brings back 1 file (notes.md) and deletes 1 file created since (extra.md), including changes you made to them yourself.",
      );
      expect(question).toContain(
        "Undo on the notice afterwards puts the files back as they are now, but not the deleted messages.",
      );

      // Cancel: nothing changed, and the edit box keeps the edited text.
      await page.locator(".monaco-dialog-box .monaco-button", { hasText: "Cancel" }).click();
      await page.locator(".monaco-dialog-box").waitFor({ state: "detached" });
      await new Promise((r) => setTimeout(r, 2_000)); // a restore, had there been one, is done by now
      expect(fs.readFileSync(notes, "utf8")).toBe(mine);
      expect(fs.existsSync(extra)).toBe(true);
      expect(await chat.locator(".edit-box textarea").inputValue()).toBe(edited);
      await shot("restore-all-cancelled");

      // Restore All in the question: the files go back, and the edited text waits in the input.
      await chat.locator(".edit-box button", { hasText: "Restore All" }).click();
      await dialog(page, "Restore the files and the conversation to before this message?");
      await page.locator(".monaco-dialog-box .monaco-button", { hasText: "Restore All" }).click();
      await waitUntil("the notes restored", () => fs.readFileSync(notes, "utf8") === "# notes\n");
      await waitUntil("extra.md deleted", () => !fs.existsSync(extra));
      await waitUntil(
        "the edited text in the input",
        async () => (await chat.locator("#input").inputValue()) === edited,
      );
      await shot("restore-all-done");
      await stop();
      fs.rmSync(project.roots.base, { recursive: true, force: true });
    },
  );

  it(
    "a restore of the running task asks with what its running command wrote among the files put back, and the restore does that",
    { timeout: 400_000 },
    async () => {
      // hunt59: the question said the file the task's running command was writing "will stay as
      // it is, not restored (not changed by this task)", and the restore (which stops the run
      // first and saves its turn) deleted it. Driven as a person does: a modal question.
      const project = gitProject("dline-vscode-restore-running-", { "notes/a.txt": "zero\n" });
      const a = path.join(project.workspace, "notes", "a.txt");
      const ticks = path.join(project.workspace, "notes", "ticks.txt");
      const model = await spawnModelServer({
        apiKey: TEST_KEY,
        turns: [
          { toolCalls: [{ name: "write_to_file", input: { path: "notes/a.txt", content: "one\n" } }] },
          { toolCalls: [{ name: "attempt_completion", input: { result: "first completion" } }] },
          {
            toolCalls: [
              {
                name: "execute_command",
                input: {
                  command: "for i in $(seq 1 60); do echo tick $i >> notes/ticks.txt; sleep 1; done",
                  requires_approval: true,
                },
              },
            ],
          },
          { toolCalls: [{ name: "attempt_completion", input: { result: "Ticked." } }] },
        ],
      });
      cleanups.push(() => model.stop());
      const env = cliEnv(project.roots, model);
      await promisify(execFile)(
        path.join(repoRoot, "dist", "dline"),
        ["task", "Task two: notes", "--workspace", project.workspace, "--yes"],
        { env },
      );
      expect(fs.readFileSync(a, "utf8")).toBe("one\n");

      const out = path.join(OUT, "..", "vscode-restore-running");
      // The window's sidecar reaches the same scripted model (its environment's profile).
      const { page, stop } = await openAsPerson({
        base: project.roots.base,
        workspace: project.workspace,
        env,
        outDir: out,
      });
      cleanups.push(stop);
      const shot = (name: string) => page.screenshot({ path: path.join(out, `${name}.png`) });
      cleanups.push(() => shot("last"));
      await page.locator(".monaco-workbench .part.statusbar").waitFor({ timeout: 60_000 });
      await openTaskFromHistory(page, "Task two: notes");
      const chat = await chatFrame(page);
      await chat.locator("#input").fill("Run the long job");
      await chat.locator("#send").click();
      await chat.locator("button", { hasText: "Run Command" }).click({ timeout: 60_000 });
      await waitUntil("the command writing ticks.txt", () => fs.existsSync(ticks), 30_000);
      await new Promise((r) => setTimeout(r, 1_500));

      // The checkpoint after "first completion" (the completion's): Restore → More options → Restore Files Only.
      const markers = chat.locator(".checkpoint");
      const last = markers.nth((await markers.count()) - 1);
      await last.hover();
      await last.locator('button[data-action="restore"]').click();
      const rows = page.locator(".quick-input-widget .monaco-list-row");
      await rows.filter({ hasText: "More options" }).first().click();
      await rows.filter({ hasText: "Restore Files Only" }).first().click();
      await dialog(page, "Restore the files to this checkpoint?");
      const question = await page.locator(".monaco-dialog-box").innerText();
      await shot("restore-running-question");
      expect(question).toContain(
        "The task is running: it is stopped first, with its command, and what the command changes until then is undone too.",
      );
      expect(question).toContain("notes/ticks.txt");
      expect(question).not.toContain("not changed by this task");
      expect(fs.existsSync(ticks)).toBe(true);
      await page.locator(".monaco-dialog-box .monaco-button", { hasText: "Restore Files Only" }).click();
      await waitUntil("ticks.txt deleted, as the question said", () => !fs.existsSync(ticks), 30_000);
      await new Promise((r) => setTimeout(r, 1_500)); // the command was stopped: it writes no more
      expect(fs.existsSync(ticks)).toBe(false);
      expect(fs.readFileSync(a, "utf8")).toBe("one\n");
      await shot("restore-running-done");
      await stop();
      fs.rmSync(project.roots.base, { recursive: true, force: true });
    },
  );

  it("shows the checkpoint limit of a home-folder workspace in the chat header", { timeout: 300_000 }, async () => {
    const roots = makeTestRoots("dline-vscode-limits-");
    const run = await runExtensionSuite({
      suite: "limits",
      base: roots.base,
      workspace: roots.home,
      env: roots.env,
      outDir: path.join(OUT, "..", "vscode-limits"),
    });
    expect(outcomes(run)).toEqual([
      ["the home folder as workspace: the chat header says checkpoints cannot be used there", true, undefined],
    ]);
    expect(run.exitCode).toBe(0);
    fs.rmSync(roots.base, { recursive: true, force: true });
  });

  it(
    "reports a core that cannot start once, with Open Settings on the Remote tab, and clears it when the setting is fixed",
    { timeout: 400_000 },
    async () => {
      const roots = makeTestRoots("dline-vscode-core-problem-");
      const workspace = path.join(roots.base, "project");
      fs.mkdirSync(workspace, { recursive: true });
      // A "core" that fails as a broken install does: it says something on stderr and exits.
      const broken = path.join(roots.base, "broken-dline-core");
      fs.writeFileSync(broken, "#!/bin/sh\necho 'broken install' >&2\nexit 3\n", { mode: 0o755 });
      const out = path.join(OUT, "..", "vscode-core-problem");
      const run = await runExtensionSuite({
        suite: "core-problem",
        base: roots.base,
        workspace,
        env: roots.env,
        outDir: out,
        machineSettings: { "dline.corePath": broken },
      });
      expect(outcomes(run)).toEqual([
        [
          "a core that exits before its handshake is reported once, at its first failed start, in a notification and in the chat",
          true,
          undefined,
        ],
        ["Open Settings opens the Remote settings on dline.corePath", true, undefined],
        ["naming a working core in the setting brings it back and clears the failure", true, undefined],
      ]);
      expect(run.exitCode).toBe(0);
      console.log(
        `the failing core was reported ${JSON.parse(fs.readFileSync(path.join(out, "report-delay.json"), "utf8")).fromActivationMs} ms after activation`,
      );
      fs.rmSync(roots.base, { recursive: true, force: true });
    },
  );
});

/**
 * Runs a command from the command palette, as a person does (F1, its title, Enter); while the
 * window starts, the extension's commands may not be listed yet: the palette is opened again.
 */
async function palette(page: Page, command: string): Promise<void> {
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: command }).first();
  for (let attempt = 1; ; attempt++) {
    // From the workbench, not the chat's webview (a key pressed there goes to its message box).
    await page.locator(".part.statusbar").click({ position: { x: 400, y: 5 } });
    await page.keyboard.press("F1");
    await page.locator(".quick-input-widget input").fill(`>${command}`);
    const listed = await row.waitFor({ timeout: 5_000 }).then(
      () => true,
      () => false,
    );
    if (listed) break;
    await page.keyboard.press("Escape");
    if (attempt === 12) throw new Error(`the command palette does not list "${command}"`);
  }
  await page.keyboard.press("Enter");
}

/** Opens a task from the History the chat's title bar shows. */
async function openTaskFromHistory(page: Page, title: string): Promise<void> {
  await palette(page, "Dline: Show History");
  await waitUntil(`"${title}" in the History`, async () => {
    for (const frame of webviewFrames(page)) {
      const row = frame.locator(".history-title", { hasText: title });
      if ((await row.count().catch(() => 0)) > 0) {
        await row.first().click();
        return true;
      }
    }
    return false;
  });
  // Shown, the chat puts the focus in its message box (a quick pick opened before would close).
  await waitUntil(`the task "${title}" shown in the chat`, async () => {
    for (const frame of webviewFrames(page))
      if (
        (await frame
          .locator(".message.user", { hasText: title })
          .count()
          .catch(() => 0)) > 0
      )
        return true;
    return false;
  });
  await new Promise((r) => setTimeout(r, 1_500));
}

/** The chat's webview frame (the one showing the conversation). */
async function chatFrame(page: Page): Promise<Frame> {
  let found: Frame | undefined;
  await waitUntil("the chat's frame", async () => {
    for (const frame of webviewFrames(page))
      if (
        (await frame
          .locator("#messages")
          .count()
          .catch(() => 0)) > 0
      ) {
        found = frame;
        return true;
      }
    return false;
  });
  return found!;
}

/** The modal dialog showing `message`: its buttons, and the one it focused (what Enter presses). */
async function dialog(page: Page, message: string): Promise<{ focused: string; buttons: string[] }> {
  await page.locator(".monaco-dialog-box", { hasText: message }).waitFor();
  return {
    focused: await page.evaluate<string>("document.activeElement?.textContent ?? ''"),
    buttons: await page.locator(".monaco-dialog-box .monaco-button").allInnerTexts(),
  };
}

async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
