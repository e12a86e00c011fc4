/**
 * Runs one extension test suite (adapters/vscode/src/test, chosen by DLINE_E2E_SUITE) in a
 * real VS Code: code-server + headless Chromium, with Dline installed from its VSIX (made by
 * the release script) as a person installs it; a small driver extension (test/vscode/driver)
 * is the extension under development only so that VS Code runs the suite. Serves the suite's
 * UI requests (src/test/ui-bridge.ts) while it runs, and returns its per-test results and exit
 * code. Stops everything it started.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Page } from "playwright-core";
import { assertBinaryBuilt, repoRoot } from "../helpers/sidecar.js";
import { assertToolsInstalled, openWorkbench, startCodeServer, webviewFrames, workbenchUrl } from "./code-server.js";
import { installVsix, testVsix } from "./vsix.js";

export const EXTENSION = path.join(repoRoot, "adapters", "vscode");
/** The extension under development: nothing but the way to run the suite. */
const DRIVER = path.join(repoRoot, "test", "vscode", "driver");

export interface SuiteResult {
  name: string;
  ok: boolean;
  error?: string;
  durationMs: number;
}

export interface SuiteRun {
  exitCode: number;
  results: SuiteResult[];
  uiErrors: string[];
  codeServerLog: string;
}

let built = false;

/** Builds the extension bundle once per test process (esbuild only: fast). */
export function buildExtension(): void {
  if (built) return;
  execFileSync(process.execPath, [path.join(repoRoot, "scripts", "build-vscode.mjs"), "--no-typecheck"], {
    stdio: "inherit",
  });
  built = true;
}

export async function runExtensionSuite(options: {
  suite: string;
  /** Scratch folder for code-server's user data, XDG folders, TMPDIR. */
  base: string;
  workspace: string;
  /** The isolated roots' environment (HOME, DLINE_DIR, ...). */
  env: NodeJS.ProcessEnv;
  /** Results, logs and screenshots go here. */
  outDir: string;
  extraEnv?: Record<string, string>;
  timeoutMs?: number;
  userSettings?: Record<string, unknown>;
  machineSettings?: Record<string, unknown>;
  /**
   * What the suite may ask the test file to do outside the editor (a request { action: "outside",
   * name }): start or stop another process, say; each answers texts for the suite.
   */
  outside?: Outside;
}): Promise<SuiteRun> {
  assertToolsInstalled();
  assertBinaryBuilt();
  buildExtension();
  const vsix = testVsix();
  fs.rmSync(options.outDir, { recursive: true, force: true });
  fs.mkdirSync(options.outDir, { recursive: true });
  const stops: (() => Promise<unknown>)[] = [];
  try {
    const installed = installVsix(vsix, {
      extensionsDir: path.join(options.base, "vscode-extensions"),
      userDataDir: path.join(options.base, "vscode-user-data"),
      env: options.env,
    });
    const { DLINE_CORE: _notUsed, ...env } = options.env;
    const server = await startCodeServer({
      base: options.base,
      workspace: options.workspace,
      userSettings: options.userSettings,
      machineSettings: options.machineSettings,
      env: {
        // No DLINE_CORE: the installed extension runs the sidecar its VSIX carries.
        ...env,
        DLINE_E2E_INSTALLED: installed,
        DLINE_E2E_SUITE: options.suite,
        DLINE_E2E_OUT: options.outDir,
        DLINE_E2E_USER_DATA: path.join(options.base, "vscode-user-data"),
        ...options.extraEnv,
      },
    });
    stops.push(async () => {
      await server.stop();
      fs.copyFileSync(server.logFile, path.join(options.outDir, path.basename(server.logFile)));
    });
    const url = workbenchUrl(server.url, options.workspace, DRIVER, path.join(EXTENSION, "out", "test", "index.js"));
    const bench = await openWorkbench(url, path.join(options.outDir, "browser-console.log"));
    stops.push(() => bench.browser.close());
    const served = serveUiRequests(bench.page, options.outDir, options.outside ?? {});
    const limit = options.timeoutMs ?? 480_000;
    const exitCode = await Promise.race([
      bench.exitCode,
      new Promise<number>((_, reject) =>
        setTimeout(
          () => reject(new Error(`the extension tests did not report an exit code within ${limit / 1000} s`)),
          limit,
        ),
      ),
    ]).finally(() => served.stop());
    const resultsFile = path.join(options.outDir, "results.json");
    const results: SuiteResult[] = fs.existsSync(resultsFile) ? JSON.parse(fs.readFileSync(resultsFile, "utf8")) : [];
    for (const r of results)
      console.log(
        `${r.ok ? "✓" : "✗"} [vscode ${options.suite}] ${r.name} (${r.durationMs} ms)${r.ok ? "" : `\n    ${r.error}`}`,
      );
    if (served.errors.length > 0) console.log(`UI bridge errors:\n${served.errors.join("\n")}`);
    return { exitCode, results, uiErrors: served.errors, codeServerLog: server.logFile };
  } finally {
    // Browser first (the workbench goes), then code-server's whole process group.
    for (const stop of stops.reverse()) await stop().catch(() => {});
  }
}

/**
 * Dline installed from its VSIX into code-server, and the workbench opened on the workspace as a
 * person opens it: no extension test suite runs in it, so VS Code shows its modal dialogs (while
 * a suite runs VS Code refuses them: "refused to show dialog in tests"). The caller drives the
 * page with Playwright, as a person does with the mouse and keyboard; `stop` closes everything.
 */
export async function openAsPerson(options: {
  base: string;
  workspace: string;
  env: NodeJS.ProcessEnv;
  outDir: string;
  userSettings?: Record<string, unknown>;
}): Promise<{ page: Page; stop(): Promise<void> }> {
  assertToolsInstalled();
  assertBinaryBuilt();
  const vsix = testVsix();
  fs.rmSync(options.outDir, { recursive: true, force: true });
  fs.mkdirSync(options.outDir, { recursive: true });
  const stops: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s().catch(() => {});
  };
  try {
    installVsix(vsix, {
      extensionsDir: path.join(options.base, "vscode-extensions"),
      userDataDir: path.join(options.base, "vscode-user-data"),
      env: options.env,
    });
    const { DLINE_CORE: _notUsed, ...env } = options.env;
    const server = await startCodeServer({
      base: options.base,
      workspace: options.workspace,
      userSettings: options.userSettings,
      env,
    });
    stops.push(async () => {
      await server.stop();
      fs.copyFileSync(server.logFile, path.join(options.outDir, path.basename(server.logFile)));
    });
    const bench = await openWorkbench(
      `${server.url}/?folder=${encodeURIComponent(options.workspace)}`,
      path.join(options.outDir, "browser-console.log"),
    );
    stops.push(() => bench.browser.close());
    return { page: bench.page, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

interface UiRequest {
  action: string;
  name?: string;
  selector?: string;
  text?: string;
  value?: string;
  press?: string;
  width?: number;
  frame?: "webview" | "main";
  /** evaluate: a JavaScript expression run in the frame (the chat's document for "webview"); its JSON value is the answer. */
  expression?: string;
}

type Outside = Record<string, () => Promise<string[]>>;

/** Answers the suite's UI requests (files ui-request-<n>.json in outDir) until stopped. */
function serveUiRequests(page: Page, outDir: string, outside: Outside): { stop(): void; errors: string[] } {
  let stopped = false;
  const errors: string[] = [];
  void (async () => {
    let next = 1;
    while (!stopped) {
      const requestFile = path.join(outDir, `ui-request-${next}.json`);
      if (!fs.existsSync(requestFile)) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        continue;
      }
      const request = JSON.parse(fs.readFileSync(requestFile, "utf8")) as UiRequest;
      let answer: { ok: boolean; error?: string; texts?: string[] };
      try {
        answer = { ok: true, texts: await perform(page, request, outDir, outside) };
      } catch (err) {
        answer = { ok: false, error: (err as Error).message };
        errors.push(`${JSON.stringify(request)}: ${(err as Error).message}`);
      }
      const answerFile = path.join(outDir, `ui-answer-${next}.json`);
      fs.writeFileSync(`${answerFile}.tmp`, JSON.stringify(answer));
      fs.renameSync(`${answerFile}.tmp`, answerFile);
      next++;
    }
  })();
  return { stop: () => (stopped = true), errors };
}

function framesFor(page: Page, request: UiRequest) {
  return request.frame === "webview" ? webviewFrames(page) : [page.mainFrame()];
}

/** The first element matching the request in any of its frames, waiting up to 10 s for one. */
async function find(page: Page, request: UiRequest) {
  for (let attempt = 0; attempt < 50; attempt++) {
    for (const frame of framesFor(page, request)) {
      let locator = frame.locator(request.selector!);
      if (request.text) locator = locator.filter({ hasText: request.text });
      if ((await locator.count().catch(() => 0)) > 0) return locator.first();
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const urls = page.frames().map((f) => f.url().slice(0, 120));
  throw new Error(
    `no element ${request.selector}${request.text ? ` with text "${request.text}"` : ""}; frames: ${urls.join(" | ")}`,
  );
}

async function perform(page: Page, request: UiRequest, outDir: string, outside: Outside): Promise<string[]> {
  switch (request.action) {
    case "outside": {
      const task = Object.hasOwn(outside, request.name!) ? outside[request.name!] : undefined;
      if (!task) throw new Error(`the test file does nothing named "${request.name}" outside the editor`);
      return task();
    }
    case "screenshot":
      await page.screenshot({ path: path.join(outDir, `${request.name}.png`) });
      return [];
    case "widenSidebar": {
      // Drag the sash on the side bar's right edge (for a readable screenshot of the chat).
      const box = await page.locator(".part.sidebar").boundingBox();
      if (!box) throw new Error("no side bar");
      const y = box.y + box.height / 2;
      await page.mouse.move(box.x + box.width + 1, y);
      await page.mouse.down();
      await page.mouse.move(box.x + (request.width ?? 500), y, { steps: 8 });
      await page.mouse.up();
      return [];
    }
    case "evaluate": {
      // The chat's document is the webview frame that holds #chat-screen.
      for (const frame of framesFor(page, request)) {
        const has =
          request.frame !== "webview" ||
          (await frame.evaluate('Boolean(document.getElementById("chat-screen"))').catch(() => false));
        if (has) return [JSON.stringify(await frame.evaluate(request.expression!))];
      }
      throw new Error("no frame with the chat's document");
    }
    case "press":
      await page.keyboard.press(request.press!);
      return [];
    case "texts": {
      const texts: string[] = [];
      for (const frame of framesFor(page, request))
        texts.push(
          ...(await frame
            .locator(request.selector!)
            .allInnerTexts()
            .catch(() => [])),
        );
      return texts;
    }
    case "values": {
      const values: string[] = [];
      for (const frame of framesFor(page, request)) {
        values.push(
          ...(await frame
            .locator(request.selector!)
            .evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value))
            .catch(() => [])),
        );
      }
      return values;
    }
    case "fill": {
      const target = await find(page, request);
      await target.fill(request.value ?? "", { timeout: 5_000 });
      if (request.press) await target.press(request.press);
      return [];
    }
    case "click": {
      const target = await find(page, request);
      // Wait until it is laid out (a button the webview is about to unhide), then hover to
      // reveal controls shown on hover (the checkpoint marker's buttons), then click.
      for (let i = 0; i < 50 && !(await target.boundingBox().catch(() => null)); i++)
        await new Promise((r) => setTimeout(r, 200));
      await target.hover({ force: true, timeout: 5_000 });
      await target.click({ timeout: 5_000 });
      return [];
    }
    default:
      throw new Error(`unknown action ${request.action}`);
  }
}
