import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import * as path from "node:path";
import * as os from "node:os";
import { fifoWaitedOn } from "./fifo-wait.js";
import { GitChildren } from "./git-children.js";
import { indexDateKeeper } from "./index-date.js";
import { COMMAND_LINE_SETTINGS, isolatedGitEnv } from "./git-environment.js";
import { runOneShot } from "./one-shot-git.js";
import { DlineError } from "../errors.js";

export { CHECKPOINT_IDENTITY } from "./git-environment.js";

/**
 * Runs the system `git` against one shadow repository, isolated from the user's git and the
 * workspace's config (git-environment.ts). Every git call of the checkpoint module goes through
 * here, one of three ways (docs/checkpoints.md says which call goes where):
 * - `text`/`command`: one-shot commands without input, through simple-git and its guards;
 * - `run`: commands fed on stdin or answering binary data (update-index --stdin, cat-file --batch);
 * - `spawn`: a process talked to while it runs (fast-import).
 * `run` and `spawn` (and `command` for the commands that read the workspace's files or start
 * git children, WORKSPACE_READERS) run git in a process group of its own, killed as a whole on
 * the caller's abort and when the sidecar stops (git-children.ts), and watched for waiting on a
 * named pipe (fifo-wait.ts): git would wait forever on a FIFO named `.gitignore`.
 */
export interface GitRunOptions {
  /** Bytes written to git's stdin (then closed). */
  input?: string | Buffer;
  /** Exit codes that are not failures (e.g. 1 for `diff --quiet`). */
  okCodes?: number[];
  signal?: AbortSignal;
  /** Extra environment (e.g. GIT_INDEX_FILE for a scratch index). */
  env?: NodeJS.ProcessEnv;
  /**
   * Work nobody waits for at once (a baseline's scan while the model answers): git runs at a
   * lower CPU priority, so the task's own steps come first on a busy machine.
   */
  background?: boolean;
}

/** `nice` of background git processes. */
const BACKGROUND_NICENESS = 10;

export interface GitResult {
  stdout: Buffer;
  stderr: string;
  code: number;
}

/**
 * A failed git run. `missing` is true when no git executable was found; `killedBy` names the
 * signal that ended a git we did not stop ("a signal" when the runner could not tell which).
 */
export class GitError extends Error {
  /** "ENOSPC" or "EDQUOT" when git said the disk (or quota) is full: answered as such (isDiskFull), not as an internal error. */
  readonly code: string | undefined;

  constructor(
    message: string,
    readonly args: string[],
    readonly stderr: string,
    readonly exitCode: number | null,
    readonly missing = false,
    readonly killedBy?: string,
  ) {
    super(message);
    this.name = "GitError";
    this.code = /No space left on device|Out of diskspace/i.test(stderr)
      ? "ENOSPC"
      : /Disk quota exceeded/i.test(stderr)
        ? "EDQUOT"
        : undefined;
  }
}

export interface ShadowGitOptions {
  gitDir: string;
  workTree: string;
  /** An empty folder: git's HOME (so there is no global config) and the hooks path. */
  emptyHooksDir: string;
  /** The environment to start from (PATH is taken from it; GIT_* variables are dropped). */
  baseEnv: NodeJS.ProcessEnv;
  /** The registry of running git processes (one per sidecar); a private one when not given. */
  children?: GitChildren;
}

/** Subcommands run in our own process group even without input: they read the workspace's files or start git children. */
const WORKSPACE_READERS = new Set(["status", "ls-files", "diff-index", "diff-files", "gc", "repack"]);

/**
 * Subcommands that read only the shadow repository: with the workspace folder gone (moved or
 * deleted after the task) they run from the repository's folder, so a task's checkpoints are
 * still listed. Any other subcommand then answers that the folder does not exist.
 */
const REPOSITORY_READERS = new Set([
  "cat-file",
  "diff-tree",
  "for-each-ref",
  "log",
  "ls-tree",
  "rev-list",
  "rev-parse",
  "show-ref",
]);

/** The workspace folder of a shadow repository is not there: a precondition the person can see to. */
export function workspaceFolderGone(workTree: string): DlineError {
  return new DlineError("failed_precondition", `The workspace folder ${workTree} does not exist.`);
}

/** How often a running git is checked for waiting on a named pipe (the first check after this long too). */
const FIFO_CHECK_MS = 200;

/** git's subcommand in an argument list (after any `-c key=value`). */
export function subcommandOf(args: readonly string[]): string | undefined {
  // One iterator for the loop and for skipping the key=value after each -c.
  const rest = args.values();
  for (const arg of rest) {
    if (arg === "-c") rest.next();
    else if (!arg.startsWith("-")) return arg;
  }
  return undefined;
}

/** The git command `args` run, as messages name it (the first argument when none is found). */
function commandName(args: readonly string[]): string | undefined {
  return subcommandOf(args) ?? args[0];
}

/** A git process waited on a named pipe (FIFO) of the workspace and was stopped. */
export class SpecialFileError extends Error {
  constructor(readonly fifoPath: string) {
    super(
      fifoPath
        ? `Checkpoints cannot read ${fifoPath}: it is a named pipe (FIFO), on which git would wait forever. Remove or rename it, then retry checkpoints.`
        : "Checkpoints stopped git: it waited on a named pipe (FIFO) in the workspace, where it reads a file such as .gitignore. Remove the FIFO, then retry checkpoints.",
    );
    this.name = "SpecialFileError";
  }
}

/** A running git process (ShadowGit.spawn). */
export interface GitProcess {
  stdin: Writable;
  stdout: Readable;
  exit: Promise<{ code: number; stderr: string }>;
}

export class ShadowGit {
  readonly env: NodeJS.ProcessEnv;
  private readonly children: GitChildren;
  /** The process groups this instance started that still run. */
  private readonly running = new Set<number>();

  constructor(readonly options: ShadowGitOptions) {
    this.env = isolatedGitEnv({
      gitDir: options.gitDir,
      workTree: options.workTree,
      emptyDir: options.emptyHooksDir,
      baseEnv: options.baseEnv,
    });
    this.children = options.children ?? new GitChildren();
  }

  /** Runs `git <args>` fed with `input`; rejects with GitError on failure. */
  async run(args: string[], opts: GitRunOptions = {}): Promise<GitResult> {
    const proc = this.spawn(args, opts);
    const out: Buffer[] = [];
    proc.stdout.on("data", (b: Buffer) => out.push(b));
    if (opts.input !== undefined) proc.stdin.end(opts.input);
    else proc.stdin.end();
    const { code, stderr } = await proc.exit;
    return { stdout: Buffer.concat(out), stderr, code };
  }

  /**
   * Starts `git <args>` and leaves its stdin open and its stdout to the caller (for a process
   * talked to while it runs, e.g. fast-import answering `ls`). `exit` settles when it ends:
   * rejected with GitError unless the code is 0 or in `okCodes`.
   */
  spawn(args: string[], opts: Omit<GitRunOptions, "input"> = {}): GitProcess {
    const keepIndexDate = indexDateKeeper(this.indexFile, args, subcommandOf(args), opts.env);
    const child = spawn("git", [...COMMAND_LINE_SETTINGS, ...args], {
      cwd: this.cwdFor(args),
      env: opts.env ? { ...this.env, ...opts.env } : this.env,
      stdio: ["pipe", "pipe", "pipe"],
      // Its own process group: stopping it stops the children it started.
      detached: true,
    });
    const pid = child.pid;
    if (pid !== undefined) {
      this.children.add(pid);
      this.running.add(pid);
    }
    if (pid !== undefined && opts.background) lowerPriority(pid, () => this.running.has(pid));
    const stop = () => pid !== undefined && this.children.kill(pid);
    const signal = opts.signal;
    if (signal?.aborted) stop();
    signal?.addEventListener("abort", stop);
    // A git waiting on a named pipe of the workspace would wait forever: it is stopped.
    let fifo: string | undefined;
    const watch =
      pid === undefined
        ? undefined
        : setInterval(() => {
            const waited = fifoWaitedOn(pid);
            if (waited === undefined) return;
            fifo = waited && this.shownPath(waited);
            stop();
          }, FIFO_CHECK_MS);
    watch?.unref();
    const err: Buffer[] = [];
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.stdin.on("error", () => {
      // git may exit before reading all input (e.g. on an error); the exit code tells.
    });
    const exit = new Promise<{ code: number; stderr: string }>((resolve, reject) => {
      child.on("error", (e: NodeJS.ErrnoException) => reject(this.spawnFailure(args, e.code, e.message)));
      child.on("close", (code, killedBy) => {
        clearInterval(watch);
        signal?.removeEventListener("abort", stop);
        if (pid !== undefined) {
          this.children.remove(pid);
          this.running.delete(pid);
        }
        const stderr = Buffer.concat(err).toString("utf8");
        const exitCode = code ?? -1;
        if (fifo !== undefined) reject(new SpecialFileError(fifo));
        else if (signal?.aborted) reject(new GitError(`git ${commandName(args)} was stopped`, args, stderr, null));
        else if (exitCode === 0 || opts.okCodes?.includes(exitCode)) {
          keepIndexDate();
          resolve({ code: exitCode, stderr });
        } else reject(failure(args, stderr, exitCode, killedBy ?? undefined));
      });
    });
    return { stdin: child.stdin, stdout: child.stdout, exit };
  }

  /** Kills every git this instance started that still runs (its whole process group). */
  stopRunning(): void {
    for (const pid of this.running) this.children.kill(pid);
  }

  /** The index git status reads (its untracked cache's dates: index-date.ts). */
  private get indexFile(): string {
    return path.join(this.options.gitDir, "index");
  }

  /** A path as the person knows it: relative to the workspace when inside it. */
  private shownPath(p: string): string {
    const rel = path.relative(this.options.workTree, p);
    return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : p;
  }

  /** A one-shot command without input, through simple-git (its argument and environment guards). */
  async command(
    args: string[],
    opts: Omit<GitRunOptions, "input"> = {},
  ): Promise<{ stdout: string; stderr: string; code: number }> {
    const cwd = this.cwdFor(args);
    if (WORKSPACE_READERS.has(subcommandOf(args) ?? "")) {
      const result = await this.run(args, opts);
      return { stdout: result.stdout.toString("utf8"), stderr: result.stderr, code: result.code };
    }
    const keepIndexDate = indexDateKeeper(this.indexFile, args, subcommandOf(args), opts.env);
    const result = await runOneShot([...COMMAND_LINE_SETTINGS, ...args], {
      cwd,
      env: opts.env ? { ...this.env, ...opts.env } : this.env,
      signal: opts.signal,
    });
    if (opts.signal?.aborted) throw new GitError(`git ${commandName(args)} was stopped`, args, result.stderr, null);
    if (result.spawnError) throw this.spawnFailure(args, result.spawnError, result.stderr);
    if (result.code === 0 || opts.okCodes?.includes(result.code)) {
      keepIndexDate();
      return result;
    }
    // simple-git answers no exit code, and does not say which signal, for a git a signal ended.
    throw failure(args, result.stderr, result.code, result.code === -1 ? "a signal" : undefined);
  }

  /** stdout of a command as text: one-shot through simple-git, or fed with `input`. */
  async text(args: string[], opts: GitRunOptions = {}): Promise<string> {
    if (opts.input !== undefined) return (await this.run(args, opts)).stdout.toString("utf8");
    return (await this.command(args, opts)).stdout;
  }

  /**
   * Where git runs: the workspace folder; when it is gone, the repository's folder for a
   * command that reads only the repository (REPOSITORY_READERS). Throws workspaceFolderGone otherwise.
   */
  private cwdFor(args: string[]): string {
    if (existsSync(this.options.workTree)) return this.options.workTree;
    if (REPOSITORY_READERS.has(subcommandOf(args) ?? "")) return this.options.gitDir;
    throw workspaceFolderGone(this.options.workTree);
  }

  private spawnFailure(args: string[], code: string | undefined, message: string): GitError | DlineError {
    // Gone between the check and the start.
    if (code === "ENOENT" && !existsSync(this.options.workTree)) return workspaceFolderGone(this.options.workTree);
    if (code === "ENOENT") return new GitError("Git must be installed to use checkpoints.", args, "", null, true);
    return new GitError(`git ${commandName(args)} failed: ${message}`, args, "", null);
  }
}

function failure(args: string[], stderr: string, exitCode: number, killedBy?: string): GitError {
  const said = stderr.trim().split("\n").slice(-3).join(" ");
  // A crashed git (SIGSEGV reading a damaged index, say) prints nothing: the signal is the cause.
  const how = killedBy ? `was killed by ${killedBy}` : `failed (${exitCode})`;
  return new GitError(
    `git ${commandName(args)} ${how}${said ? `: ${said}` : ""}`,
    args,
    stderr,
    exitCode,
    false,
    killedBy,
  );
}

/** NUL-separated git output to a list (the trailing empty entry dropped). */
export function splitNul(buf: Buffer | string): string[] {
  const s = typeof buf === "string" ? buf : buf.toString("utf8");
  const parts = s.split("\0");
  if (parts.length && parts[parts.length - 1] === "") parts.pop();
  return parts;
}

/** Messages git prints when objects or the index are damaged. */
const CORRUPTION = [
  /object file .* is empty/i,
  /loose object .* is corrupt/i,
  /unable to unpack/i,
  /bad object/i,
  /not a valid object/i,
  /index file corrupt/i,
  /bad signature 0x/i,
  /inflate: data stream error/i,
  /invalid object/i,
  /fatal: bad tree object/i,
  /is corrupt/i,
  /not a git repository/i,
  /unable to read tree/i,
  /fatal: packed object .* is corrupt/i,
  /cannot read .* object/i,
  /unable to read sha1 file/i,
  /missing (blob|tree|commit) /i,
];

export function looksCorrupt(err: unknown): boolean {
  return err instanceof GitError && CORRUPTION.some((re) => re.test(err.stderr));
}

/**
 * Lowers a child's CPU priority: set right after the spawn, before git starts the threads that
 * stat the work tree (they inherit it). Not possible everywhere (a container's limits): then it
 * runs as it would have.
 *
 * Its nice value alone does nothing where Linux groups processes by session (autogroup, on in
 * most desktop distributions' kernels): git runs in a session of its own (its own process
 * group, `detached`), whose group the scheduler weighs as much as the whole session of the
 * editor or terminal that runs the sidecar, whatever the nice value of git's threads. So the
 * group's own nice value is lowered too (lowerAutogroup).
 */
function lowerPriority(pid: number, stillRuns: () => boolean): void {
  try {
    os.setPriority(pid, BACKGROUND_NICENESS);
  } catch {
    // Runs at the usual priority.
  }
  lowerAutogroup(pid, stillRuns);
}

/**
 * Sets the nice value of the scheduling group of `pid` (`/proc/<pid>/autogroup`) when that is
 * a group of its own, never this process's (which holds the editor or terminal). Linux lets a
 * process without CAP_SYS_ADMIN change one group's value every 100 ms (EAGAIN otherwise): then
 * it is tried once more after that, if git still runs (`retry`).
 */
function lowerAutogroup(pid: number, retry?: () => boolean): void {
  if (process.platform !== "linux") return;
  const file = `/proc/${pid}/autogroup`;
  try {
    const group = readFileSync(file, "utf8").split(" ")[0];
    if (!group || group === ownAutogroup()) return;
    writeFileSync(file, String(BACKGROUND_NICENESS));
  } catch (err) {
    // No autogroups (ENOENT), git gone already, or too soon after another change.
    if (retry && (err as NodeJS.ErrnoException).code === "EAGAIN")
      setTimeout(() => retry() && lowerAutogroup(pid), 110).unref();
  }
}

let ownGroup: string | undefined;

/** This process's scheduling group ("" without autogroups); a process keeps its group until it makes a session. */
function ownAutogroup(): string {
  if (ownGroup === undefined) {
    try {
      ownGroup = readFileSync("/proc/self/autogroup", "utf8").split(" ")[0] ?? "";
    } catch {
      ownGroup = "";
    }
  }
  return ownGroup;
}
