import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { spawn, type ChildProcess } from "node:child_process";
import Database from "better-sqlite3";
import type { WireFormat, RecordedRequest } from "../model-server/script.js";
import { startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import { configureModel, makeWorkspace } from "../runtime/harness.js";

export const mcpServerScript = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "fixtures",
  "mcp-test-server.mjs",
);

export function writeFile(file: string, content: string, mode?: number): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
  if (mode !== undefined) fs.chmodSync(file, mode);
}

export async function setupTask(
  cleanups: (() => Promise<unknown>)[],
  turns: Parameters<typeof configureModel>[2]["turns"],
  format: WireFormat = "openai",
  env?: NodeJS.ProcessEnv,
) {
  const sidecar: RunningSidecar = await startSidecar({ env });
  cleanups.push(() => sidecar.stop());
  const { server, profileId } = await configureModel(sidecar.clients, format, { turns });
  cleanups.push(() => server.stop());
  const workspace = makeWorkspace(sidecar.roots.base);
  return { sidecar, server, profileId, workspace, docs: sidecar.roots.docsDir, clients: sidecar.clients };
}

/** The system prompt an OpenAI-format request carried. */
export function systemPromptOf(request: RecordedRequest): string {
  const first = request.body.messages[0];
  return first.role === "system" ? String(first.content) : "";
}

export function toolNamesOf(request: RecordedRequest): string[] {
  return (request.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
}

/** The text of the OpenAI-format request's messages after the system prompt. */
export function conversationOf(request: RecordedRequest): string {
  return JSON.stringify(request.body.messages.slice(1));
}

export function activities(file: string): { kind: string; data: Record<string, unknown> }[] {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare("SELECT kind, data FROM activities ORDER BY seq").all() as { kind: string; data: string }[]).map(
      (r) => ({ kind: r.kind, data: JSON.parse(r.data) }),
    );
  } finally {
    db.close();
  }
}

/** Starts the test MCP server over streamable HTTP; resolves with its URL. */
export async function startHttpMcpServer(
  dir: string,
  label: string,
): Promise<{ url: string; process: ChildProcess; stop(): Promise<void> }> {
  const portFile = path.join(dir, `mcp-port-${label}`);
  const child = spawn(process.execPath, [mcpServerScript, "http", portFile], {
    env: { ...process.env, MCP_TEST_LABEL: label },
    stdio: ["pipe", "ignore", "inherit"],
  });
  for (let i = 0; i < 200 && !fs.existsSync(portFile); i++) await new Promise((r) => setTimeout(r, 25));
  await new Promise((r) => setTimeout(r, 20));
  const port = fs.readFileSync(portFile, "utf8").trim();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

export { isRunning as isAlive } from "../helpers/processes.js";

export async function waitFor<T>(probe: () => Promise<T | undefined>, what: string, tries = 200): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}
