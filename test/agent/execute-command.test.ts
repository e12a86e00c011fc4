import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findTool, runTool } from "../../core/src/agent/tools/registry.js";
import { createToolGuard } from "../../core/src/agent/tools/tool-guard.js";
import { makeContext, makeWorkspace, type TestWorkspace } from "./tool-helpers.js";
import { isRunning } from "../helpers/processes.js";

let ws: TestWorkspace;
afterEach(() => ws?.cleanup());

/** Alive = present in /proc and not a zombie (an orphaned zombie may wait for a slow reaper). */
async function waitFor(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const execute = findTool("execute_command")!;

describe("execute_command", () => {
  it("streams output chunks, appends them to the log file and returns the exit code", async () => {
    ws = makeWorkspace();
    const log = path.join(ws.parent, "logs", "cmd.log");
    const ctx = await makeContext(ws.root, { commandLogPath: log });
    const result = await runTool(
      execute,
      { command: "echo first; sleep 0.3; echo second >&2; pwd; exit 3", requires_approval: false },
      ctx,
    );
    expect(ctx.output.length).toBeGreaterThanOrEqual(2); // first and second arrive in separate chunks
    expect(ctx.output[0]).toBe("first\n");
    expect(ctx.output.join("")).toBe(`first\nsecond\n${fs.realpathSync(ws.root)}\n`);
    expect(result.command).toEqual({ exitCode: 3, signal: null, timedOut: false, cancelled: false });
    expect(result.isError).toBe(true);
    expect(result.content).toContain("second");
    expect(result.content).toContain("Exit code: 3");
    expect(fs.readFileSync(log, "utf8")).toBe(
      `$ echo first; sleep 0.3; echo second >&2; pwd; exit 3\nfirst\nsecond\n${fs.realpathSync(ws.root)}\n`,
    );
    // a second command appends
    await runTool(execute, { command: "echo again", requires_approval: false }, ctx);
    expect(fs.readFileSync(log, "utf8")).toMatch(/\$ echo again\nagain\n$/);
  });

  it("runs without the variables that hold a secret: the model's key cannot come back in another form", async () => {
    ws = makeWorkspace();
    const secret = "sk-provider-key-0123456789";
    process.env.DLINE_TEST_PROVIDER_KEY = secret;
    process.env.DLINE_TEST_PLAIN = "an ordinary value";
    try {
      const ctx = await makeContext(ws.root, { guard: createToolGuard([], [secret]) });
      const result = await runTool(
        execute,
        {
          command:
            'printf "%s|" "$DLINE_TEST_PROVIDER_KEY" | rev; echo; echo "plain=$DLINE_TEST_PLAIN"; env | grep -c DLINE_TEST_PROVIDER_KEY',
          requires_approval: false,
        },
        ctx,
      );
      // Reversed, the key would pass the redaction of its exact text.
      expect(result.content).not.toContain([...secret].reverse().join(""));
      expect(result.content).toContain("plain=an ordinary value");
      expect(result.content).toMatch(/^0$/m);
    } finally {
      delete process.env.DLINE_TEST_PROVIDER_KEY;
      delete process.env.DLINE_TEST_PLAIN;
    }
  });

  it("succeeds with exit code 0", async () => {
    ws = makeWorkspace();
    const result = await runTool(execute, { command: "true", requires_approval: false }, await makeContext(ws.root));
    expect(result).toMatchObject({ isError: false, command: { exitCode: 0 } });
    expect(result.content).toBe("No output.\nExit code: 0");
  });

  it("kills the whole process group on timeout", async () => {
    ws = makeWorkspace();
    const pidFile = path.join(ws.parent, "grandchild.pid");
    const ctx = await makeContext(ws.root, { commandTimeoutMs: 500 });
    const result = await runTool(
      execute,
      { command: `sleep 60 & echo $! > ${pidFile}; echo started; wait`, requires_approval: false },
      ctx,
    );
    expect(result.command?.timedOut).toBe(true);
    expect(result.content).toMatch(/timed out/);
    const grandchild = Number(fs.readFileSync(pidFile, "utf8"));
    await waitFor(() => !isRunning(grandchild), "the grandchild to die");
  });

  it("cancellation kills the shell and its grandchild", async () => {
    ws = makeWorkspace();
    const pidFile = path.join(ws.parent, "grandchild.pid");
    const ctx = await makeContext(ws.root);
    const running = runTool(
      execute,
      { command: `sh -c 'sleep 60' & echo $! > ${pidFile}; echo ready; wait`, requires_approval: true },
      ctx,
    );
    await waitFor(() => ctx.output.join("").includes("ready"), "the command to start");
    const grandchild = Number(fs.readFileSync(pidFile, "utf8"));
    expect(isRunning(grandchild)).toBe(true);
    ctx.controller.abort();
    const result = await running;
    expect(result.command).toMatchObject({ cancelled: true, timedOut: false });
    expect(result.content).toMatch(/cancelled/);
    await waitFor(() => !isRunning(grandchild), "the grandchild to die");
  });

  it("gives the model the head and the tail of a long output", async () => {
    ws = makeWorkspace();
    const result = await runTool(
      execute,
      { command: "seq 1 30000", requires_approval: false },
      await makeContext(ws.root),
    );
    expect(result.content).toMatch(/\n\[\d+ characters omitted\]\n/);
    expect(result.content).toMatch(/^Output:\n1\n2\n3\n/);
    expect(result.content).toContain("\n30000\n");
    expect(result.content.length).toBeLessThan(70 * 1024);
  });
});
