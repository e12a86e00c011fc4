import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import * as readline from "node:readline/promises";
import type { DlineClients } from "../../../../core/src/client/index.js";
import {
  AskKind,
  MessageRole,
  TaskStatus,
  type Ask,
  type TaskEvent,
} from "../../../../core/src/gen/dline/v1/task_pb.js";
import { approvalDetails, approvalDiffIsCut } from "../approval-view.js";
import { checkFlags, checkPositionals, stringFlag, UsageError, type ParsedArgs } from "../args.js";
import { CUT_OFF_LINE, EventRenderer, isTerminal } from "../render.js";
import { TaskEventsEnded, withSidecar, type CliContext } from "../session.js";
import { visible, visibleLine } from "../../../../core/src/text/visible-text.js";

interface FollowOptions {
  yes: boolean;
  /**
   * When a question comes and no terminal can answer it (stdin is not a TTY) and --yes does not:
   * `stop` the task this command runs (nobody is there to answer, and a denial in the person's
   * name would mislead the model), or `leave` it to the window that runs the task (a follower).
   */
  unanswerable: "stop" | "leave";
  /**
   * The message this command sent (resume --message): until the task takes it (its row, or the
   * answer to the question it waited on), a completion is the run's before it, not the end.
   */
  sent?: string;
}

/** A question nobody here can answer: the task stopped before it. */
class UnansweredQuestion extends Error {}

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
    const lines = visible(input.command)
      .split("\n")
      .map((l) => `    ${l}`)
      .join("\n");
    return `Approve ${visibleLine(ask.tool)}? The exact command:\n${lines}\n[y/N/feedback] `;
  }
  const choices = approvalDiffIsCut(ask) ? "y/N/d(iff, whole)/feedback" : "y/N/feedback";
  // The summary names the tool already ("replace_in_file src/a.ts"), usually.
  const what = ask.summary.startsWith(`${ask.tool} `) ? ask.summary : `${ask.tool}: ${ask.summary}`;
  return `Approve ${visibleLine(what)}? [${choices}] `;
}

/** The whole diff of an approval, through the person's pager ($PAGER, else less), or written out when there is none. */
function pageWholeDiff(ctx: CliContext, ask: Ask): void {
  const text = approvalDetails(ask, true);
  const pager = process.env.PAGER || "less";
  const shown = spawnSync("sh", ["-c", pager], { input: text, stdio: ["pipe", "inherit", "inherit"] });
  if (shown.error || shown.status === 127) ctx.err.write(text);
}

/**
 * Answers one ask: --yes approves (and picks a follow-up's first option), a terminal asks the
 * user. `signal` takes the question back (it was answered in another window).
 */
async function answer(
  ctx: CliContext,
  ask: Ask,
  options: FollowOptions,
  signal: AbortSignal,
): Promise<{ approve: boolean; text: string }> {
  const onTerminal = ctx.interactive;
  if (ask.kind === AskKind.FOLLOWUP) {
    if (options.yes && ask.options.length > 0) return { approve: true, text: ask.options[0]! };
    if (!onTerminal) return noAnswerHere(ask, options, signal);
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
    try {
      if (ask.options.length)
        ctx.err.write(ask.options.map((o, i) => `  ${i + 1}. ${visibleLine(o)}`).join("\n") + "\n");
      const text = (await rl.question(`${visible(ask.summary)}\n> `, { signal })).trim();
      const n = Number(text);
      return { approve: true, text: (Number.isInteger(n) && ask.options[n - 1]) || text };
    } finally {
      rl.close();
    }
  }
  if (options.yes) return { approve: true, text: "" };
  if (!onTerminal) return noAnswerHere(ask, options, signal);
  for (;;) {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
    let reply: string;
    try {
      reply = (await rl.question(approvalQuestion(ask), { signal })).trim();
    } finally {
      rl.close();
    }
    if (/^y(es)?$/i.test(reply)) return { approve: true, text: "" };
    if (/^d$/i.test(reply) && approvalDiffIsCut(ask)) {
      pageWholeDiff(ctx, ask);
      continue;
    }
    return { approve: false, text: /^n(o)?$/i.test(reply) || reply === "" ? "" : reply };
  }
}

/**
 * A question this command cannot answer (no terminal, no --yes): a follower leaves it to the
 * window that runs the task and waits until it is settled there; a task run here stops.
 */
async function noAnswerHere(
  ask: Ask,
  options: FollowOptions,
  signal: AbortSignal,
): Promise<{ approve: boolean; text: string }> {
  if (options.unanswerable === "leave") {
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    throw signal.reason;
  }
  const what = ask.kind === AskKind.FOLLOWUP ? "The model asks a question" : `${visibleLine(ask.tool)} needs approval`;
  throw new UnansweredQuestion(
    `${what}, and nobody can answer it here: stdin is not a terminal. The task stopped before it.`,
  );
}

/**
 * The question on the terminal while the task's events keep coming: the same task may be open
 * in another window (another editor, another `dline`), and when the question is answered there
 * this one is taken back instead of waiting for an answer nobody needs.
 */
class PendingQuestion {
  private readonly controller = new AbortController();
  private answeredHere = false;
  readonly done: Promise<void>;

  constructor(
    ctx: CliContext,
    clients: DlineClients,
    taskId: string,
    readonly ask: Ask,
    options: FollowOptions,
  ) {
    this.done = (async () => {
      let reply: { approve: boolean; text: string };
      try {
        reply = await answer(ctx, ask, options, this.controller.signal);
      } catch (err) {
        if (this.controller.signal.aborted) return;
        throw err;
      }
      this.answeredHere = true;
      try {
        await clients.tasks.respond({ taskId, askId: ask.askId, approve: reply.approve, text: reply.text });
      } catch (err) {
        // Answered in another window between the reply and this call: that answer stands.
        if (this.controller.signal.aborted || (await this.answeredElsewhere(clients, taskId, err))) return;
        throw err;
      }
    })();
  }

  private async answeredElsewhere(clients: DlineClients, taskId: string, err: unknown): Promise<boolean> {
    if (!(err instanceof ConnectError) || err.code !== Code.FailedPrecondition) return false;
    const view = await clients.tasks.getTask({ taskId }).catch(() => undefined);
    return view !== undefined && view.pendingAsk?.askId !== this.ask.askId;
  }

  /** Still waiting for the task to take an answer (from here or another window). */
  get open(): boolean {
    return !this.controller.signal.aborted;
  }

  /** The question was settled elsewhere (another window's answer, a cancel, the task's end). */
  settled(ctx: CliContext, approved: boolean | undefined): void {
    if (this.controller.signal.aborted) return;
    this.controller.abort();
    if (!this.answeredHere && approved !== undefined && !ctx.json)
      ctx.err.write(`\n(${approved ? "approved" : "denied"} in another window)\n`);
  }
}

/**
 * Follows a task's events until its run ends, answering asks on the way (`pending`: the question
 * the task waits on already, for a follower that starts after it was asked). Ctrl-C cancels the
 * task. Returns the exit code: 0 completed, 1 failed, 130 cancelled.
 */
export async function followTask(
  ctx: CliContext,
  clients: DlineClients,
  taskId: string,
  afterSeq: bigint,
  options: FollowOptions,
  pending?: Ask,
): Promise<number> {
  const renderer = new EventRenderer(ctx.out, ctx.json, ctx.err);
  const controller = new AbortController();
  let interrupted = false;
  let question: PendingQuestion | undefined;
  let failure: unknown;
  const held: TaskEvent[] = [];
  let sent = options.sent;
  const onSigint = () => {
    // Twice (the cancel does not get through): stop following; the sidecar stops with the CLI.
    if (interrupted) return controller.abort();
    interrupted = true;
    void clients.tasks.cancel({ taskId }).catch(() => controller.abort());
  };
  const ask = (value: Ask) => {
    question?.settled(ctx, undefined);
    const current = new PendingQuestion(ctx, clients, taskId, value, options);
    question = current;
    current.done.catch((err: unknown) => {
      failure ??= err;
      controller.abort();
    });
  };
  process.on("SIGINT", onSigint);
  try {
    let final: TaskStatus = TaskStatus.UNSPECIFIED;
    if (pending) {
      renderer.renderAsk(pending);
      ask(pending);
    }
    try {
      for await (const res of clients.tasks.subscribe({ taskId, afterSeq }, { signal: controller.signal })) {
        const event = res.event!;
        const e = event.event;
        if (
          (e.case === "messageAdded" && e.value.message?.role === MessageRole.USER && e.value.message.text === sent) ||
          (e.case === "askResolved" && !e.value.dropped && e.value.text === sent)
        )
          sent = undefined;
        if (sent !== undefined && e.case === "statusChanged" && e.value.status === TaskStatus.COMPLETED) {
          // The run before the message completed; the message is answered next (here or in the
          // window that runs the task). Its completion line would read as this command's end.
          if (ctx.json) renderer.render(event);
          continue;
        }
        const ends = e.case === "statusChanged" && isTerminal(e.value.status);
        if (
          question?.open &&
          !ends &&
          e.case !== "ask" &&
          !(e.case === "askResolved" && e.value.askId === question.ask.askId)
        ) {
          // Shown once the question is settled: output now would write over the prompt.
          held.push(event);
          continue;
        }
        question?.settled(ctx, e.case === "askResolved" && !e.value.dropped ? e.value.approved : undefined);
        for (const earlier of held.splice(0)) renderer.render(earlier);
        renderer.render(event);
        if (e.case === "ask") ask(e.value);
        if (ends) {
          final = e.value.status;
          break;
        }
      }
    } catch (err) {
      if (failure === undefined && !(interrupted && controller.signal.aborted)) throw err;
    }
    question?.settled(ctx, undefined);
    for (const earlier of held.splice(0)) renderer.render(earlier);
    await question?.done.catch(() => undefined);
    if (failure instanceof UnansweredQuestion) {
      await clients.tasks.cancel({ taskId });
      throw new Error(
        `${failure.message} Continue it on a terminal with dline resume ${taskId}, or run it with --yes to approve every step.`,
      );
    }
    if (failure !== undefined) throw failure;
    if (final === TaskStatus.UNSPECIFIED && !interrupted) throw new TaskEventsEnded(taskId);
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
  return withSidecar(
    ctx,
    async (clients) => {
      // Without --profile the sidecar chooses: the default profile, else the model the environment
      // names (OPENAI_* / ANTHROPIC_*, which the sidecar reads itself and never stores).
      const profileId = stringFlag(args, "profile") ?? "";
      const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text, profileId });
      return followTask(ctx, clients, taskId, 0n, { yes: args.flags.has("yes"), unanswerable: "stop" });
    },
    { taskWorkspace: workspace },
  );
}

export async function resumeCommand(ctx: CliContext, args: ParsedArgs): Promise<number> {
  checkFlags(args, ["yes", "message", "workspace"]);
  checkPositionals(args, 1, `to send a message, use --message "${args.positionals.slice(1).join(" ")}"`);
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
      if (
        !workspaceRoot &&
        err instanceof ConnectError &&
        err.code === Code.FailedPrecondition &&
        needsWorkspace(task?.workspaceRoot ?? "")
      ) {
        const where = task?.workspaceRoot
          ? `its folder ${task.workspaceRoot} is not on this machine`
          : "it has no workspace";
        throw new Error(
          `task ${taskId} cannot continue: ${where}. Name the folder to continue it in: dline resume ${taskId} --workspace DIR`,
          { cause: err },
        );
      }
      throw err;
    }
    return followTask(ctx, clients, taskId, lastSeq, {
      yes: args.flags.has("yes"),
      unanswerable: "stop",
      sent: message || undefined,
    });
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

/**
 * Follows a task that runs elsewhere (another editor window, another `dline`), or here: its
 * conversation so far, then its events, answering its questions on this terminal. A task that
 * does not run is shown, not continued (`dline resume` continues it).
 */
export async function followCommand(ctx: CliContext, args: ParsedArgs): Promise<number> {
  checkFlags(args, ["yes"]);
  checkPositionals(args, 1);
  const [taskId] = args.positionals;
  if (!taskId) throw new UsageError("dline follow needs a task id (see dline history).");
  return withSidecar(ctx, async (clients) => {
    const view = await clients.tasks.getTask({ taskId });
    const status = view.task?.status ?? TaskStatus.UNSPECIFIED;
    if (status !== TaskStatus.RUNNING && status !== TaskStatus.WAITING) {
      if (!ctx.json)
        ctx.err.write(
          `task ${taskId} is not running (${TaskStatus[status].toLowerCase()}): dline show ${taskId} prints it, dline resume ${taskId} continues it\n`,
        );
      return status === TaskStatus.COMPLETED ? 0 : 1;
    }
    if (!ctx.json) {
      for (const m of view.messages) {
        if (m.kind === "text" && (m.role === MessageRole.USER || m.role === MessageRole.ASSISTANT)) {
          ctx.out.write(`${m.role === MessageRole.USER ? "> " : ""}${visible(m.text)}\n`);
          if (m.cutOff) ctx.out.write(`${CUT_OFF_LINE}\n`);
        }
      }
      ctx.err.write(
        `following task ${taskId}${view.ownerPid ? `, running in the Dline window of pid ${view.ownerPid}` : ""}\n`,
      );
    }
    if (!ctx.interactive && !ctx.json && !args.flags.has("yes"))
      ctx.err.write("(stdin is not a terminal: its questions are left to the window that runs it)\n");
    return followTask(
      ctx,
      clients,
      taskId,
      view.lastSeq,
      { yes: args.flags.has("yes"), unanswerable: "leave" },
      view.pendingAsk,
    );
  });
}
