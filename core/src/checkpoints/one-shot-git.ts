import { OWN_GIT_VARIABLES } from "./git-environment.js";

export interface OneShotResult {
  stdout: string;
  stderr: string;
  /** The exit code; negative when git could not be started (see `spawnError`). */
  code: number;
  /** The system error code when git could not be started (ENOENT: no git on PATH). */
  spawnError?: string;
}

/**
 * Runs one git command without input through simple-git, with all of its guards on: no
 * `unsafe` option is enabled, so an argument that would name a program or a config path
 * (`-c core.hooksPath=...`, `-c core.fsmonitor=...`, `--upload-pack`, `-c include.path=...`)
 * is refused before anything starts, and of the GIT_* variables only the ones the checkpoint
 * module sets itself pass its environment guard. The exit code is answered, not thrown:
 * callers decide which codes are failures.
 */
export async function runOneShot(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; signal?: AbortSignal },
): Promise<OneShotResult> {
  let outcome: { exitCode: number; stdErr: Buffer[] } | undefined;
  // Loaded at its first use: a later task's saves run no one-shot command, and evaluating
  // simple-git (and its dependencies) took 2-3 ms of every CLI task's start.
  const { simpleGit } = await import("simple-git");
  const git = simpleGit({
    baseDir: options.cwd,
    abort: options.signal,
    allowEnvironment: OWN_GIT_VARIABLES,
    // Every outcome is handed back to the caller (a non-zero code may be an answer, e.g. 1 for "no such ref").
    errors: (_error, result) => {
      outcome = { exitCode: result.exitCode, stdErr: result.stdErr };
      return undefined;
    },
  }).env(options.env);
  const stdout = await git.raw(args);
  const stderr = Buffer.concat(outcome?.stdErr ?? []).toString("utf8");
  // A process ended by a signal has no exit code: a failure, never a success.
  const code = outcome === undefined ? 0 : (outcome.exitCode ?? -1);
  const spawnError =
    code < 0 && outcome?.exitCode !== null ? (/\b(E[A-Z]+)\b/.exec(stderr)?.[1] ?? "EUNKNOWN") : undefined;
  return { stdout, stderr, code, spawnError };
}
