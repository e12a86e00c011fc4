/**
 * Takes the VS Code extension's Marketplace screenshots (adapters/vscode/media/screenshots/)
 * from the real thing: the released VSIX installed into code-server, opened in headless
 * Chromium, a task run through the chat as a person would (type, Send, Approve, Compare), the
 * model played by the scripted model server. Run by scripts/vscode-screenshots.mjs.
 *
 *   node scripts/vscode-screenshots.mjs [path/to/dline-vscode-<version>-<platform>.vsix]
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Frame, Page } from "playwright-core";
import { makeTestRoots, repoRoot } from "../helpers/sidecar.js";
import { spawnModelServer } from "../model-server/spawn.js";
import type { ModelServerScript } from "../model-server/script.js";
import {
  assertToolsInstalled,
  CODE_SERVER,
  NODE24_BIN,
  openWorkbench,
  startCodeServer,
  webviewFrames,
} from "../vscode/code-server.js";

const version = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")).version as string;
const vsix = path.resolve(
  process.argv[2] ??
    path.join(repoRoot, "dist", "release", `dline-vscode-${version}-${process.platform}-${process.arch}.vsix`),
);
const outDir = path.join(repoRoot, "adapters", "vscode", "media", "screenshots");
const API_KEY = "sk-demo-not-a-real-key";

const GREET_BEFORE = `// Greets someone by name.
function greet(name) {
  return "Hello " + name + "!";
}

module.exports = { greet };
`;

const script: ModelServerScript = {
  apiKey: API_KEY,
  turns: [
    {
      text: 'I\'ll make `greet` use a template literal and fall back to "world" when no name is given.',
      toolCalls: [
        {
          name: "replace_in_file",
          input: {
            path: "src/greet.js",
            diff: '------- SEARCH\nfunction greet(name) {\n  return "Hello " + name + "!";\n}\n=======\nfunction greet(name = "world") {\n  return `Hello ${name}!`;\n}\n+++++++ REPLACE',
          },
        },
      ],
      usage: { input: 2400, output: 90 },
    },
    {
      text: 'Done: `greet()` now returns "Hello world!".',
      toolCalls: [
        {
          name: "attempt_completion",
          input: { result: '`greet` uses a template literal and defaults the name to "world".' },
        },
      ],
      usage: { input: 2600, output: 40 },
    },
  ],
};

async function inWebview<T>(page: Page, what: string, fn: (frame: Frame) => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    for (const frame of webviewFrames(page)) {
      const found = await fn(frame).catch(() => undefined);
      if (found !== undefined) return found;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function visible(frame: Frame, selector: string): Promise<true | undefined> {
  const locator = frame.locator(selector).first();
  return (await locator.count()) > 0 && (await locator.isVisible()) ? true : undefined;
}

async function main() {
  assertToolsInstalled();
  if (!fs.existsSync(vsix)) throw new Error(`${vsix} does not exist: run "npm run release" first`);
  const roots = makeTestRoots("dline-screenshots-");
  const stops: (() => Promise<unknown>)[] = [];
  try {
    const workspace = path.join(roots.base, "greeter");
    fs.mkdirSync(path.join(workspace, "src"), { recursive: true });
    fs.writeFileSync(path.join(workspace, "src", "greet.js"), GREET_BEFORE);
    fs.writeFileSync(
      path.join(workspace, "package.json"),
      JSON.stringify({ name: "greeter", version: "1.0.0", main: "src/greet.js" }, null, 2) + "\n",
    );
    execFileSync("git", ["init", "-q"], { cwd: workspace });

    const model = await spawnModelServer(script);
    stops.push(() => model.stop());

    const extensions = path.join(roots.base, "vscode-extensions");
    const env = { ...roots.env, PATH: `${NODE24_BIN}:/usr/local/bin:/usr/bin:/bin` };
    execFileSync(
      path.join(NODE24_BIN, "node"),
      [
        CODE_SERVER,
        "--extensions-dir",
        extensions,
        "--user-data-dir",
        path.join(roots.base, "vscode-user-data"),
        "--install-extension",
        vsix,
      ],
      { env },
    );
    const bundled = path.join(extensions, `dline.dline-vscode-${version}`, "bin", "dline-core");
    // A model profile, set up with the CLI as a person would (the key read from the environment).
    execFileSync(
      process.execPath,
      [
        path.join(repoRoot, "dist", "dline"),
        "--core",
        bundled,
        "profile",
        "add",
        "demo",
        "--provider",
        "openai",
        "--base-url",
        model.url,
        "--model",
        "demo-model",
        "--api-key-env",
        "DEMO_KEY",
        "--default",
      ],
      { env: { ...roots.env, DEMO_KEY: API_KEY } },
    );

    const server = await startCodeServer({
      base: roots.base,
      workspace,
      env: { ...roots.env, PATH: "/usr/local/bin:/usr/bin:/bin" },
    });
    stops.push(() => server.stop());
    const bench = await openWorkbench(`${server.url}/?folder=${encodeURIComponent(workspace)}`);
    stops.push(() => bench.browser.close());
    const page = bench.page;
    await page.setViewportSize({ width: 1280, height: 800 });
    // The Dline view (the chat fills the side bar), and the file being worked on.
    await page.locator('.activitybar [aria-label^="Dline"]').first().click({ timeout: 120_000 });
    await page.keyboard.press("Control+P");
    await page.locator(".quick-input-widget input").waitFor({ timeout: 60_000 });
    await page.keyboard.type("greet.js");
    await page
      .locator(".quick-input-list .monaco-list-row", { hasText: "greet.js" })
      .first()
      .waitFor({ timeout: 60_000 });
    await page.keyboard.press("Enter");
    await page.locator(".tabs-container .tab", { hasText: "greet.js" }).first().waitFor({ timeout: 60_000 });
    const box = await page.locator(".part.sidebar").boundingBox();
    if (box) {
      await page.mouse.move(box.x + box.width + 1, box.y + box.height / 2);
      await page.mouse.down();
      await page.mouse.move(box.x + 470, box.y + box.height / 2, { steps: 8 });
      await page.mouse.up();
    }

    const composer = await inWebview(page, "the chat composer", async (frame) =>
      (await visible(frame, "#input")) ? frame : undefined,
    );
    await composer.locator("#input").fill('Make greet() use a template literal and default the name to "world".');
    await composer.locator("#send").click();
    await inWebview(page, "the Approve button", (frame) => visible(frame, 'button[data-action="approve"]'));
    // The proposed change opens in the diff editor beside the chat.
    await page.locator(".tabs-container .tab", { hasText: "proposed change" }).first().waitFor({ timeout: 60_000 });
    await new Promise((r) => setTimeout(r, 1500)); // the diff editor lays out its content
    await page.addStyleTag({ content: ".notifications-toasts { display: none !important; }" }).catch(() => {});
    fs.mkdirSync(outDir, { recursive: true });
    await page.screenshot({ path: path.join(outDir, "chat-approval.png") });

    await composer.locator('button[data-action="approve"]').click();
    await inWebview(page, "the completed task", (frame) => visible(frame, 'button[data-action="view-changes"]'));
    const compare = composer.locator('.checkpoint button[data-action="compare"]').first();
    await compare.hover({ force: true });
    await compare.click();
    await page.getByText("Changes since snapshot").first().waitFor({ timeout: 60_000 });
    await new Promise((r) => setTimeout(r, 1500)); // the diff editor lays out its content
    await page.screenshot({ path: path.join(outDir, "compare-checkpoint.png") });
    console.log(`screenshots written to ${path.relative(repoRoot, outDir)}`);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    fs.rmSync(roots.base, { recursive: true, force: true });
  }
}

await main();
