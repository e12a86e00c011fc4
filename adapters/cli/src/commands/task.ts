import * as fs from "node:fs";
import * as path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import * as readline from "node:readline/promises";
import type { DlineClients } from "../../../../core/src/client/index.js";
import { AskKind, TaskStatus, type Ask } from "../../../../core/src/gen/dline/v1/task_pb.js";
import { checkFlags, stringFlag, UsageError, type ParsedArgs } from "../args.js";
import { EventRenderer, isTerminal } from "../render.js";
import { withSidecar, type CliContext } from "../session.js";
import { visible, visibleLine } from "../visible-text.js";

interface FollowOptions {
  yes: boolean;
}

/**
 * The approval question, with the model's text made visible. A command is shown whole and
 * exactly as it will run (every line, indented), not its one-line summary.
 */
export function approvalQuestion(ask: Ask): string {
  let input: Record<string, unknown> = {};
  try {
    input = JSON.parse(ask.detail) as Record<string, unknown>;
  } catch {
    // no arguments to show: the summary says what it is
  }
  if (ask.kind === AskKind.COMMAND_APPROVAL && typeof input.command === "string") {
    const lines = visible(input.command).split("\n").map((l) => `    ${l}`).join("\n");
    return `Approve ${visibleLine(ask.tool)}? The exact command:\n${lines}\n[y/N/feedback] `;
  }
  return `Approve ${visibleLine(ask.tool)}: ${visibleLine(ask.summary)}? [y/N/feedback] `;
}

/** Answers one ask: --yes approves (and picks a follow-up's first option), a terminal asks the user. */
async function answer(ctx: CliContext, ask: Ask, options: FollowOptions): Promise<{ approve: boolean; text: string }> {
  if (ask.kind === AskKind.FOLLOWUP) {
    if (options.yes && ask.options.length > 0) return { approve: true, text: ask.options[0] };
    if (!ctx.interactive) return { approve: false, text: "(no answer: the CLI is not interactive; run it on a terminal)" };
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
    try {
      if (ask.options.length) ctx.err.write(ask.options.map((o, i) => `  ${i + 1}. ${visibleLine(o)}`).join("\n") + "\n");
      const text = (await rl.question(`${visible(ask.summary)}\n> `)).trim();
      const n = Number(text);
      return { approve: true, text: Number.isInteger(n) && ask.options[n - 1] ? ask.options[n - 1] : text };
    } finally {
      rl.close();
    }
  }
  if (options.yes) return { approve: true, text: "" };
  if (!ctx.interactive) return { approve: false, text: "Denied: the CLI is not interactive (use --yes to approve)." };
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    const reply = (await rl.question(approvalQuestion(ask))).trim();
    if (/^y(es)?$/i.test(reply)) return { approve: true, text: "" };
    return { approve: false, text: /^n(o)?$/i.test(reply) || reply === "" ? "" : reply };
  } finally {
    rl.close();
  }
}

/**
 * Follows a task's events until its run ends, answering asks on the way. Ctrl-C cancels the
 * task. Returns the exit code: 0 completed, 1 failed, 130 cancelled.
 */
export async function followTask(ctx: CliContext, clients: DlineClients, taskId: string, afterSeq: bigint, options: FollowOptions): Promise<number> {
  const renderer = new EventRenderer(ctx.out, ctx.json, ctx.err);
  const controller = new AbortController();
  let interrupted = false;
  const onSigint = () => {
    interrupted = true;
    void clients.tasks.cancel({ taskId }).catch(() => controller.abort());
  };
  process.on("SIGINT", onSigint);
  try {
    let final: TaskStatus = TaskStatus.UNSPECIFIED;
    for await (const res of clients.tasks.subscribe({ taskId, afterSeq }, { signal: controller.signal })) {
      const event = res.event!;
      renderer.render(event);
      if (event.event.case === "ask") {
        const reply = await answer(ctx, event.event.value, options);
        await clients.tasks.respond({ taskId, askId: event.event.value.askId, approve: reply.approve, text: reply.text });
      }
      if (event.event.case === "statusChanged" && isTerminal(event.event.value.status)) {
        final = event.event.value.status;
        break;
      }
    }
    if (!ctx.json) ctx.err.write(`task ${taskId}\n`);
    if (interrupted || final === TaskStatus.CANCELLED) return 130;
    return final === TaskStatus.COMPLETED ? 0 : 1;
  } finally {
    process.off("SIGINT", onSigint);
  }
}

export async function taskCommand(ctx: CliContext, args: ParsedArgs): Promise<number> {
  checkFlags(args, ["workspace", "profile", "yes"]);
  const text = args.positionals.join(" ").trim();
  if (!text) throw new UsageError('dline task needs a prompt: dline task "what to do"');
  const workspace = path.resolve(stringFlag(args, "workspace") ?? process.cwd());
  return withSidecar(ctx, async (clients) => {
    // Without --profile the sidecar chooses: the default profile, else the model the environment
    // names (OPENAI_* / ANTHROPIC_*, which the sidecar reads itself and never stores).
    const profileId = stringFlag(args, "profile") ?? "";
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text, profileId });
    return followTask(ctx, clients, taskId, 0n, { yes: args.flags.has("yes") });
  });
}

export async function resumeCommand(ctx: CliContext, args: ParsedArgs): Promise<number> {
  checkFlags(args, ["yes", "message", "workspace"]);
  const [taskId] = args.positionals;
  if (!taskId) throw new UsageError("dline resume needs a task id (see dline history).");
  const given = stringFlag(args, "workspace");
  // Never the current folder by default: a task continues in its own workspace or a named one.
  const workspaceRoot = given === undefined ? "" : path.resolve(given);
  return withSidecar(ctx, async (clients) => {
    const { lastSeq, task } = await clients.tasks.getTask({ taskId });
    const message = stringFlag(args, "message");
    try {
      if (message) await clients.tasks.sendMessage({ taskId, text: message, workspaceRoot });
      else await clients.tasks.resume({ taskId, workspaceRoot });
    } catch (err) {
      if (!workspaceRoot && err instanceof ConnectError && err.code === Code.FailedPrecondition && needsWorkspace(task?.workspaceRoot ?? "")) {
        const where = task?.workspaceRoot ? `its folder ${task.workspaceRoot} is not on this machine` : "it has no workspace";
        throw new Error(`task ${taskId} cannot continue: ${where}. Name the folder to continue it in: dline resume ${taskId} --workspace DIR`);
      }
      throw err;
    }
    return followTask(ctx, clients, taskId, lastSeq, { yes: args.flags.has("yes") });
  });
}

/** A task with no workspace, or whose recorded folder is not here, needs one named to continue. */
function needsWorkspace(recorded: string): boolean {
  if (!recorded) return true;
  try {
    return !fs.statSync(recorded).isDirectory();
  } catch {
    return true;
  }
}
