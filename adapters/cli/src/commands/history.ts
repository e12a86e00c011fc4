import { toJson } from "@bufbuild/protobuf";
import { TaskSort } from "../../../../core/src/gen/dline/v1/history_pb.js";
import {
  DeleteMode,
  TaskStatus,
  TaskSummarySchema,
  UiMessageSchema,
} from "../../../../core/src/gen/dline/v1/task_pb.js";
import { checkFlags, checkPositionals, numberFlag, stringFlag, UsageError, type ParsedArgs } from "../args.js";
import { CUT_OFF_LINE } from "../render.js";
import { printJson, withSidecar, type CliContext } from "../session.js";
import { toolRowStatus } from "../tool-row-status.js";
import { visible, visibleLine } from "../../../../core/src/text/visible-text.js";

export async function historyCommand(ctx: CliContext, args: ParsedArgs): Promise<number> {
  checkFlags(args, ["workspace", "query", "favorites", "limit", "sort"]);
  checkPositionals(args, 0, "to search, use --query TEXT");
  const sortName = stringFlag(args, "sort") ?? "newest";
  const sorts: Record<string, TaskSort> = {
    newest: TaskSort.NEWEST,
    oldest: TaskSort.OLDEST,
    cost: TaskSort.MOST_EXPENSIVE,
  };
  if (!(sortName in sorts)) throw new UsageError("--sort takes newest, oldest or cost.");
  return withSidecar(ctx, async (clients) => {
    const res = await clients.history.listTasks({
      workspaceRoot: stringFlag(args, "workspace") ?? "",
      query: stringFlag(args, "query") ?? "",
      favoritesOnly: args.flags.has("favorites"),
      pageSize: numberFlag(args, "limit") ?? 50,
      sort: sorts[sortName],
    });
    if (ctx.json) {
      printJson(ctx, { tasks: res.tasks.map((t) => toJson(TaskSummarySchema, t)), nextPageToken: res.nextPageToken });
      return 0;
    }
    for (const t of res.tasks) {
      const when = new Date(Number(t.createdAt)).toISOString().slice(0, 16).replace("T", " ");
      ctx.out.write(
        `${t.favorite ? "★" : " "} ${t.id}  ${when}  ${TaskStatus[t.status].toLowerCase().padEnd(11)} ${titleOf(t.title).slice(0, 70)}\n`,
      );
    }
    if (res.tasks.length === 0) ctx.out.write("no tasks\n");
    return 0;
  });
}

export async function showCommand(ctx: CliContext, args: ParsedArgs): Promise<number> {
  checkFlags(args, []);
  checkPositionals(args, 1);
  const [taskId] = args.positionals;
  if (!taskId) throw new UsageError("dline show needs a task id.");
  return withSidecar(ctx, async (clients) => {
    const res = await clients.tasks.getTask({ taskId });
    if (ctx.json) {
      printJson(ctx, {
        task: res.task ? toJson(TaskSummarySchema, res.task) : null,
        messages: res.messages.map((m) => toJson(UiMessageSchema, m)),
        lastSeq: res.lastSeq.toString(),
        statusReason: res.statusReason,
      });
      return 0;
    }
    const t = res.task!;
    const status = TaskStatus[t.status].toLowerCase();
    // Why it stands there, as the core said ("interrupted (the conversation was restored to an
    // earlier point)"), unless the reason only repeats the status.
    const why =
      res.statusReason && res.statusReason.toLowerCase() !== status && t.status !== TaskStatus.RUNNING
        ? ` (${visibleLine(res.statusReason)})`
        : "";
    const cost = t.costUnknown
      ? t.cost > 0
        ? `$${t.cost.toFixed(4)} + unknown`
        : "cost unknown"
      : `$${t.cost.toFixed(4)}`;
    ctx.out.write(`${titleOf(t.title)}\n${t.id} · ${visibleLine(t.workspaceRoot)} · ${status}${why} · ${cost}\n\n`);
    for (const m of res.messages) {
      const who = ["?", "you", "dline", "tool", "system"][m.role] ?? "?";
      // A tool row's kind ("tool", "command") says no more than its role, unless it is another kind.
      const kind = m.kind !== "text" && m.kind !== who ? ` ${m.kind}` : "";
      const status = who === "tool" ? toolRowStatus(m.detail) : "";
      ctx.out.write(`[${who}${kind}] ${visible(m.text)}${status}\n`);
      if (m.cutOff) ctx.out.write(`${CUT_OFF_LINE}\n`);
    }
    return 0;
  });
}

export async function deleteCommand(ctx: CliContext, args: ParsedArgs): Promise<number> {
  checkFlags(args, ["all", "all-except-favorites"]);
  const mode = args.flags.has("all")
    ? DeleteMode.ALL
    : args.flags.has("all-except-favorites")
      ? DeleteMode.ALL_EXCEPT_FAVORITES
      : DeleteMode.SELECTED;
  if (mode === DeleteMode.SELECTED && args.positionals.length === 0) {
    throw new UsageError("dline delete needs task ids, --all or --all-except-favorites.");
  }
  return withSidecar(ctx, async (clients) => {
    const res = await clients.tasks.deleteTasks({ taskIds: args.positionals, mode });
    if (ctx.json) printJson(ctx, { deletedTaskIds: res.deletedTaskIds });
    else ctx.out.write(`deleted ${res.deletedTaskIds.length} task(s)\n`);
    return 0;
  });
}

/** A task rewound to before its first message has no title until its next first message. */
function titleOf(title: string): string {
  return title ? visibleLine(title) : "(untitled task)";
}
