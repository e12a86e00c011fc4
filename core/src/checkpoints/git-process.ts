import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import type { Readable, Writable } from "node:stream";

/**
 * Runs the system `git` against one shadow repository with an environment isolated from the
 * user's git: no global or system config, no inherited GIT_* variables, hooks off, signing
 * off, the Dline identity, explicit GIT_DIR / GIT_WORK_TREE. Every git call of the checkpoint
 * module goes through here.
 */
export interface GitRunOptions {
  /** Bytes written to git's stdin (then closed). */
  input?: string | Buffer;
  /** Exit codes that are not failures (e.g. 1 for `diff --quiet`). */
  okCodes?: number[];
  signal?: AbortSignal;
  /** Extra environment (e.g. GIT_INDEX_FILE for a scratch index). */
  env?: NodeJS.ProcessEnv;
}

export interface GitResult {
  stdout: Buffer;
  stderr: string;
  code: number;
}

/** A failed git run. `missing` is true when no git executable was found. */
export class GitError extends Error {
  constructor(
    message: string,
    readonly args: string[],
    readonly stderr: string,
    readonly exitCode: number | null,
    readonly missing = false,
  ) {
    super(message);
    this.name = "GitError";
  }
}

export const CHECKPOINT_IDENTITY = { name: "Dline Checkpoint", email: "checkpoint@dline.invalid" };

export interface ShadowGitOptions {
  gitDir: string;
  workTree: string;
  /** An empty folder used as core.hooksPath, so no hook of any kind runs. */
  emptyHooksDir: string;
  /** The environment to start from (PATH is taken from it; GIT_* variables are dropped). */
  baseEnv: NodeJS.ProcessEnv;
}

/** A running git process (ShadowGit.spawn). */
export interface GitProcess {
  stdin: Writable;
  stdout: Readable;
  exit: Promise<{ code: number; stderr: string }>;
}

export class ShadowGit {
  private readonly env: NodeJS.ProcessEnv;

  constructor(readonly options: ShadowGitOptions) {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(options.baseEnv)) {
      if (!k.toUpperCase().startsWith("GIT_")) env[k] = v;
    }
    Object.assign(env, {
      GIT_DIR: options.gitDir,
      GIT_WORK_TREE: options.workTree,
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_TERMINAL_PROMPT: "0",
      // Paths we pass are file names, never patterns.
      GIT_LITERAL_PATHSPECS: "1",
      GIT_AUTHOR_NAME: CHECKPOINT_IDENTITY.name,
      GIT_AUTHOR_EMAIL: CHECKPOINT_IDENTITY.email,
      GIT_COMMITTER_NAME: CHECKPOINT_IDENTITY.name,
      GIT_COMMITTER_EMAIL: CHECKPOINT_IDENTITY.email,
      LC_ALL: "C",
    });
    this.env = env;
  }

  /** Runs `git <args>` with the isolated environment; rejects with GitError on failure. */
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
    const fullArgs = [
      "-c", `core.hooksPath=${this.options.emptyHooksDir}`,
      "-c", "commit.gpgSign=false",
      "-c", "tag.gpgSign=false",
      "-c", "core.quotePath=false",
      "-c", "core.autocrlf=false",
      "-c", "core.safecrlf=false",
      "-c", "safe.directory=*",
      "-c", "core.excludesFile=/dev/null",
      "-c", "core.attributesFile=/dev/null",
      ...args,
    ];
    const child = spawn("git", fullArgs, {
      cwd: this.options.workTree,
      env: opts.env ? { ...this.env, ...opts.env } : this.env,
      stdio: ["pipe", "pipe", "pipe"],
      signal: opts.signal,
    });
    const err: Buffer[] = [];
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.stdin.on("error", () => {
      // git may exit before reading all input (e.g. on an error); the exit code tells.
    });
    const exit = new Promise<{ code: number; stderr: string }>((resolve, reject) => {
      child.on("error", (e: NodeJS.ErrnoException) => {
        if (e.code === "ENOENT" && !existsSync(this.options.workTree)) {
          reject(new GitError(`The workspace folder ${this.options.workTree} does not exist.`, args, "", null));
        } else if (e.code === "ENOENT") {
          reject(new GitError("Git must be installed to use checkpoints.", args, "", null, true));
        } else {
          reject(new GitError(`git ${args[0]} failed: ${e.message}`, args, "", null));
        }
      });
      child.on("close", (code) => {
        const stderr = Buffer.concat(err).toString("utf8");
        const exitCode = code ?? -1;
        if (exitCode === 0 || opts.okCodes?.includes(exitCode)) {
          resolve({ code: exitCode, stderr });
        } else {
          reject(new GitError(`git ${args[0]} failed (${exitCode}): ${stderr.trim().split("\n").slice(-3).join(" ")}`, args, stderr, exitCode));
        }
      });
    });
    return { stdin: child.stdin, stdout: child.stdout, exit };
  }

  async text(args: string[], opts?: GitRunOptions): Promise<string> {
    return (await this.run(args, opts)).stdout.toString("utf8");
  }
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
