import { toJson } from "@bufbuild/protobuf";
import {
  CheckpointKind,
  CheckpointSchema,
  FileChangeSchema,
  FileStatus,
  RestoreMode,
} from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import { checkFlags, stringFlag, UsageError, type ParsedArgs } from "../args.js";
import { printJson, withSidecar, type CliContext } from "../session.js";
import { visibleLine } from "../visible-text.js";

export async function checkpointsCommand(ctx: CliContext, args: ParsedArgs): Promise<number> {
  checkFlags(args, []);
  const [taskId] = args.positionals;
  if (!taskId) throw new UsageError("dline checkpoints needs a task id.");
  return withSidecar(ctx, async (clients) => {
    const res = await clients.checkpoints.listCheckpoints({ taskId });
    if (ctx.json) {
      printJson(ctx, { checkpoints: res.checkpoints.map((c) => toJson(CheckpointSchema, c)) });
      return 0;
    }
    for (const c of res.checkpoints) {
      const when = new Date(Number(c.createdAt)).toISOString().slice(0, 19).replace("T", " ");
      const kind = CheckpointKind[c.kind].toLowerCase().replace("_", " ");
      ctx.out.write(`${c.id}  ${when}  ${kind}${c.restored ? " (restored)" : ""}\n`);
    }
    if (res.checkpoints.length === 0) ctx.out.write("no checkpoints\n");
    return 0;
  });
}

export async function compareCommand(ctx: CliContext, args: ParsedArgs): Promise<number> {
  checkFlags(args, []);
  const [taskId, checkpointId] = args.positionals;
  if (!taskId || !checkpointId) throw new UsageError("dline compare needs a task id and a checkpoint id.");
  return withSidecar(ctx, async (clients) => {
    const res = await clients.checkpoints.compare({ taskId, checkpointId });
    if (ctx.json) {
      printJson(ctx, { files: res.files.map((f) => toJson(FileChangeSchema, f)) });
      return 0;
    }
    ctx.out.write("Changes since snapshot\n");
    for (const f of res.files)
      ctx.out.write(
        `  ${FileStatus[f.status].toLowerCase().padEnd(9)} ${visibleLine(f.path)}${f.binary ? " (binary)" : ""}\n`,
      );
    if (res.files.length === 0) ctx.out.write("  no changes\n");
    return 0;
  });
}

export async function restoreCommand(ctx: CliContext, args: ParsedArgs): Promise<number> {
  checkFlags(args, ["mode"]);
  const [taskId, checkpointId] = args.positionals;
  if (!taskId || !checkpointId) throw new UsageError("dline restore needs a task id and a checkpoint id.");
  const modes: Record<string, RestoreMode> = {
    "files-and-task": RestoreMode.FILES_AND_TASK,
    files: RestoreMode.FILES,
    task: RestoreMode.TASK,
  };
  const modeName = stringFlag(args, "mode") ?? "files-and-task";
  if (!(modeName in modes)) throw new UsageError("--mode takes files-and-task, files or task.");
  return withSidecar(ctx, async (clients) => {
    const res = await clients.checkpoints.restore({ taskId, checkpointId, mode: modes[modeName] });
    if (ctx.json) printJson(ctx, res);
    else {
      ctx.out.write(
        res.filesRestored
          ? `restored ${res.restoredPaths.length} file(s), deleted ${res.deletedPaths.length}\n`
          : "conversation restored\n",
      );
      if (res.fileError) ctx.err.write(`file restore failed: ${res.fileError}\n`);
      if (res.undoCheckpointId)
        ctx.out.write(`undo with: dline restore ${taskId} ${res.undoCheckpointId} --mode files\n`);
    }
    return res.fileError ? 1 : 0;
  });
}
