import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import type { ScriptTurn } from "../model-server/script.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { cliEnv, startCli, type CliChild } from "./cli-child.js";
import { makeTestRoots, type TestRoots } from "./sidecar.js";

export interface CliSandbox {
  roots: TestRoots;
  workspace: string;
  server: ModelServerProcess;
  /** The environment a `dline` of this sandbox runs with (its roots, the scripted model). */
  env: NodeJS.ProcessEnv;
}

/**
 * Fresh roots and workspace, and a scripted model server playing `turns`; the server is added to
 * `servers`, which the test file stops after each test.
 */
export async function cliSandbox(turns: ScriptTurn[], servers: ModelServerProcess[]): Promise<CliSandbox> {
  const roots = makeTestRoots();
  const workspace = makeWorkspace(roots.base);
  const server = await spawnModelServer({ apiKey: TEST_KEY, turns });
  servers.push(server);
  return { roots, workspace, server, env: cliEnv(roots, server) };
}

/** `dline task --yes` in a new sandbox whose model's one turn runs `command`: started, not awaited. */
export async function taskRunningCommand(
  command: string,
  servers: ModelServerProcess[],
): Promise<CliSandbox & { task: CliChild }> {
  const sandbox = await cliSandbox(
    [{ toolCalls: [{ name: "execute_command", input: { command, requires_approval: false } }] }],
    servers,
  );
  const task = startCli(["task", "run the command", "--workspace", sandbox.workspace, "--yes"], sandbox.env);
  return { ...sandbox, task };
}
