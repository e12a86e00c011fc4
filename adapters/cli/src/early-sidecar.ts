import * as path from "node:path";
import { spawnSidecar, type SidecarProcess } from "../../../core/src/client/sidecar-process.js";
import { parseArgs } from "./args.js";
import { VALUE_FLAGS } from "./flags.js";
import { locateCore } from "./locate-core.js";

/** Commands that run a task: their sidecar is started before the rest of the CLI loads. */
const RUN_A_TASK = new Set(["task", "resume"]);

/** What a command's sidecar is started with: the executable and its `serve` arguments. */
export interface SidecarLaunch {
  binary: string;
  args: string[];
}

/**
 * The `serve` arguments of the CLI's sidecar: stopped after its one command, and told the folder
 * of a task that starts at once (its checkpoints get ready while the CLI connects).
 */
export function sidecarArgs(taskWorkspace: string | undefined): string[] {
  return ["--one-command", ...(taskWorkspace ? ["--workspace", taskWorkspace] : [])];
}

/** Starts a sidecar the way the CLI's commands do (see withSidecar). */
export function spawnCliSidecar(launch: SidecarLaunch, env: NodeJS.ProcessEnv): Promise<SidecarProcess> {
  // In a session of its own: a Ctrl-C at the terminal reaches the CLI alone, which cancels the
  // task (followTask) rather than the sidecar stopping under it.
  return spawnSidecar({
    binary: launch.binary,
    args: launch.args,
    cwd: process.cwd(),
    env,
    stderr: "ignore",
    ownSession: true,
  });
}

/**
 * The sidecar a command line that runs a task will most likely need, guessed from its words
 * alone: the command's own parsing and checks come later. Undefined for other commands, for a
 * task without a prompt or help asked for, and when the executable cannot be found (the command
 * says so itself).
 */
export function likelyLaunch(argv: string[], env: NodeJS.ProcessEnv, cliFile: string): SidecarLaunch | undefined {
  try {
    const args = parseArgs(argv, VALUE_FLAGS);
    const [command, ...words] = args.positionals;
    if (command === undefined || !RUN_A_TASK.has(command) || args.flags.has("help") || args.flags.has("version")) {
      return undefined;
    }
    if (!words.join(" ").trim()) return undefined;
    const core = args.flags.get("core");
    const binary = locateCore(typeof core === "string" ? core : undefined, env, cliFile);
    const workspace = args.flags.get("workspace");
    const taskWorkspace =
      command === "task" ? path.resolve(typeof workspace === "string" ? workspace : process.cwd()) : undefined;
    return { binary, args: sidecarArgs(taskWorkspace) };
  } catch {
    // A malformed command line (`--workspace` with no value), a current folder that is gone:
    // the command itself says so, as it did before any sidecar was started early.
    return undefined;
  }
}

/**
 * A sidecar started before the CLI has loaded the rest of its code (Connect, the generated
 * messages, the commands), so that the two start side by side: for `dline task` the sidecar's
 * scan of the workspace for its checkpoints then begins that much sooner. A command
 * takes it only if it would start the very same one; otherwise it is stopped, and the command
 * starts its own. Unclaimed, it goes when the CLI exits (its stdin closes).
 */
export class EarlySidecar {
  private pending: Promise<SidecarProcess> | undefined;

  constructor(
    private readonly launch: SidecarLaunch | undefined,
    env: NodeJS.ProcessEnv,
  ) {
    this.pending = launch && spawnCliSidecar(launch, env);
    // A failed start is the command's to report, when it asks for its sidecar.
    this.pending?.catch(() => undefined);
  }

  /** The early sidecar if it was started as `wanted`; undefined otherwise (and it is stopped). */
  take(wanted: SidecarLaunch): Promise<SidecarProcess> | undefined {
    const pending = this.pending;
    this.pending = undefined;
    if (!pending) return undefined;
    if (this.launch && sameLaunch(this.launch, wanted)) return pending;
    pending.then(
      (sidecar) => void sidecar.stop(),
      () => undefined,
    );
    return undefined;
  }
}

function sameLaunch(a: SidecarLaunch, b: SidecarLaunch): boolean {
  return a.binary === b.binary && a.args.length === b.args.length && a.args.every((arg, i) => arg === b.args[i]);
}
