/**
 * Runs hook executables. The contract (also in docs of `dline capabilities`):
 * - A hook is an executable in `hooks/` (global) or `<project>/.agents/hooks/`, named after its
 *   event (`PreToolUse`, `PreToolUse.sh`) or placed in a folder named after it (`PreToolUse/x`).
 * - It runs with the workspace as its working folder, receives the event's JSON payload on
 *   stdin (`event`, `taskId`, `workspaceRoot` and the event's fields, e.g. `tool` and `input`
 *   for PreToolUse), and `DLINE_HOOK_EVENT` in its environment. It is killed after the
 *   timeout (the setting `hookTimeoutSeconds`, default 30).
 * - PreToolUse: the tool is blocked when the hook exits non-zero, times out, or prints a JSON
 *   line `{"block": true, "reason": "..."}` on stdout. The reason the model reads is that
 *   `reason`, else the hook's output, else its exit status.
 * - Its stdout and stderr (bounded) are recorded as activities, never as the user's words.
 * - Like a command the model runs, it gets no variable that holds a secret (the model's API key),
 *   and every stored secret in what it prints is redacted.
 */
import type { ChildProcess } from "node:child_process";
import { spawnLeashed } from "../agent/index.js";
import type { HookEvent, HookOutcome, HookRun } from "../runtime/index.js";

export const DEFAULT_HOOK_TIMEOUT_MS = 30_000;
const MAX_OUTPUT_CHARS = 16 * 1024;

export interface HookToRun {
  name: string;
  path: string;
}

/** What keeps secrets out of a hook's environment and out of what it printed. */
export interface HookSecrets {
  withoutSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
  redact(text: string): string;
}

const noSecrets: HookSecrets = { withoutSecrets: (env) => env, redact: (text) => text };

function runOne(
  hook: HookToRun,
  event: HookEvent,
  payload: Record<string, unknown>,
  cwd: string,
  timeoutMs: number,
  secrets: HookSecrets,
  signal?: AbortSignal,
): Promise<HookRun & { stdout: string }> {
  return new Promise((resolve) => {
    let output = "";
    let stdout = "";
    let timedOut = false;
    const append = (chunk: Buffer, isStdout: boolean) => {
      const text = chunk.toString("utf8");
      if (isStdout && stdout.length < MAX_OUTPUT_CHARS) stdout += text;
      if (output.length < MAX_OUTPUT_CHARS) output += text;
    };
    let child: ChildProcess;
    let release: () => void;
    try {
      // Leashed: a hook that outlives a killed sidecar is killed with it (leashed-spawn.ts).
      ({ child, release } = spawnLeashed(hook.path, [], {
        cwd,
        env: { ...secrets.withoutSecrets(process.env), DLINE_HOOK_EVENT: event },
        stdin: "pipe",
      }));
    } catch (err) {
      resolve({
        hook: hook.name,
        exitCode: null,
        output: `could not start: ${(err as Error).message}`,
        timedOut: false,
        stdout: "",
      });
      return;
    }
    const kill = () => {
      try {
        if (child.pid && process.platform !== "win32") process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    const onAbort = () => kill();
    signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout!.on("data", (c: Buffer) => append(c, true));
    child.stderr!.on("data", (c: Buffer) => append(c, false));
    child.stdin!.on("error", () => {}); // a hook that does not read its stdin
    child.stdin!.end(JSON.stringify(payload));
    let settled = false;
    const finish = (exitCode: number | null, extra = "") => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve({
        hook: hook.name,
        exitCode,
        output: secrets.redact((output + extra).slice(0, MAX_OUTPUT_CHARS)),
        timedOut,
        stdout: secrets.redact(stdout),
      });
    };
    child.on("error", (err) => finish(null, `could not start: ${err.message}`));
    child.on("exit", () => release());
    child.on("close", (code) => finish(code));
  });
}

/** `{"block": true, "reason": "..."}` on a line of stdout. */
function blockRequest(stdout: string): { reason?: string } | undefined {
  for (const line of stdout.split("\n").reverse()) {
    const trimmed = line.trim();
    if (!trimmed.startsWith("{")) continue;
    try {
      const value = JSON.parse(trimmed) as { block?: unknown; reason?: unknown };
      if (value.block === true) return { reason: typeof value.reason === "string" ? value.reason : undefined };
    } catch {
      // not JSON: plain output
    }
  }
  return undefined;
}

/** Runs the hooks of one event one after another (a blocking PreToolUse hook stops the rest). */
export async function runHooks(
  hooks: readonly HookToRun[],
  event: HookEvent,
  payload: Record<string, unknown>,
  cwd: string,
  options: { timeoutMs?: number; signal?: AbortSignal; secrets?: HookSecrets } = {},
): Promise<HookOutcome> {
  const runs: HookRun[] = [];
  for (const hook of hooks) {
    const { stdout, ...run } = await runOne(
      hook,
      event,
      payload,
      cwd,
      options.timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
      options.secrets ?? noSecrets,
      options.signal,
    );
    runs.push(run);
    if (event !== "PreToolUse") continue;
    const requested = blockRequest(stdout);
    if (requested || run.exitCode !== 0) {
      const status = run.timedOut
        ? "timed out"
        : run.exitCode === null
          ? "did not run"
          : `exited with code ${run.exitCode}`;
      const reason = requested?.reason ?? (run.output.trim().slice(0, 2000) || `the hook ${hook.name} ${status}`);
      return { blocked: reason, runs };
    }
  }
  return { runs };
}
