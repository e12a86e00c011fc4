import { toJson } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  CheckpointKind,
  CheckpointSchema,
  CheckpointState,
  FileChangeSchema,
  FileStatus,
  KeptReason,
  RestoreMode,
  RestoreResponseSchema,
  SkipReason,
  SkippedPathSchema,
  type FileChange,
  type SkippedPath,
} from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import { checkFlags, checkPositionals, stringFlag, UsageError, type ParsedArgs } from "../args.js";
import { printJson, SidecarDiedError, withSidecar, type CliContext } from "../session.js";
import { sayingWhileHeldElsewhere } from "../checkpoint-wait.js";
import type { DlineClients } from "../../../../core/src/client/index.js";
import { visibleLine } from "../../../../core/src/text/visible-text.js";
import { unicodeFormNotes } from "../unicode-twins.js";
import { MESSAGES } from "../../../../core/src/checkpoints/workspace-guard.js";

const READY_MESSAGE: string = MESSAGES.ready;

export async function checkpointsCommand(ctx: CliContext, args: ParsedArgs): Promise<number> {
  checkFlags(args, []);
  checkPositionals(args, 1);
  const [taskId] = args.positionals;
  if (!taskId) throw new UsageError("dline checkpoints needs a task id.");
  return withSidecar(ctx, async (clients) => {
    const res = await sayingWhileHeldElsewhere(ctx.err, clients, taskId, () =>
      clients.checkpoints.listCheckpoints({ taskId }),
    );
    if (ctx.json) {
      printJson(ctx, { checkpoints: res.checkpoints.map((c) => toJson(CheckpointSchema, c)) });
      return 0;
    }
    await sayRepositoryNote(ctx, clients, taskId);
    for (const c of res.checkpoints) {
      const when = listedTime(Number(c.createdAt));
      const kind = CheckpointKind[c.kind].toLowerCase().replace("_", " ");
      ctx.out.write(`${c.id}  ${when}  ${kind}${c.restored ? " (restored)" : ""}\n`);
    }
    if (res.checkpoints.length === 0) ctx.out.write("no checkpoints\n");
    return 0;
  });
}

/**
 * What the workspace's checkpoints say beyond "ready", on stderr: a restore an earlier process
 * left part-way (its files may match no checkpoint), a repaired repository. Said before the
 * listing or the comparison it bears on.
 */
async function sayRepositoryNote(ctx: CliContext, clients: DlineClients, taskId: string): Promise<void> {
  const status = await clients.checkpoints.getStatus({ taskId }).catch(() => undefined);
  if (status?.state === CheckpointState.READY && status.message && status.message !== READY_MESSAGE)
    ctx.err.write(`dline: ${visibleLine(status.message)}\n`);
}

/** How many left-out paths compare names before "and N more". */
const SKIPPED_SHOWN = 8;

export async function compareCommand(ctx: CliContext, args: ParsedArgs): Promise<number> {
  checkFlags(args, []);
  checkPositionals(args, 2);
  const [taskId, checkpointId] = args.positionals;
  if (!taskId || !checkpointId) throw new UsageError("dline compare needs a task id and a checkpoint id.");
  return withSidecar(ctx, async (clients) => {
    const res = await sayingWhileHeldElsewhere(ctx.err, clients, taskId, async () =>
      clients.checkpoints.compare({ taskId, checkpointId: await fullCheckpointId(clients, taskId, checkpointId) }),
    );
    if (ctx.json) {
      printJson(ctx, {
        files: res.files.map((f) => toJson(FileChangeSchema, f)),
        skipped: res.skipped.map((k) => toJson(SkippedPathSchema, k)),
        restorePaths: res.restorePaths,
      });
      return 0;
    }
    await sayRepositoryNote(ctx, clients, taskId);
    ctx.out.write("Changes since snapshot\n");
    const restored = new Set(res.restorePaths);
    const forms = unicodeFormNotes(res.files.map((f) => f.path));
    for (const f of res.files) {
      // A changed file the checkpoints leave out (no earlier version kept): a restore leaves it as it is.
      // So does one outside the restore's scope (the person's or another task's change).
      const notes = [
        f.binary ? " (binary)" : f.tooLarge ? " (too large to show)" : "",
        f.modeBefore ? ` (permissions ${f.modeBefore} -> ${f.modeAfter})` : "",
        f.notTracked
          ? "  (not tracked by checkpoints: not restored)"
          : restored.has(f.path)
            ? ""
            : "  (a files restore leaves it as it is)",
      ];
      const name = `${visibleLine(f.path)}${forms.get(f.path) ?? ""}`;
      ctx.out.write(`  ${FileStatus[f.status].toLowerCase().padEnd(9)} ${name}${notes.join("")}\n`);
    }
    if (res.files.length === 0) ctx.out.write("  no changes\n");
    ctx.out.write(skippedLines(res.files, res.skipped));
    return 0;
  });
}

/**
 * What the snapshot left out, so that its silence about those paths is not taken for "no change".
 * A path listed above as changed is not named again (a tool's edit of a left-out file keeps its
 * earlier version, so it is compared and restored; a changed file the checkpoints do not track
 * is listed as such), and the sentence does not say that those are never compared.
 */
function skippedLines(files: readonly FileChange[], skipped: readonly SkippedPath[]): string {
  const changed = new Set(files.map((f) => f.path.replace(/\/$/, "")));
  const rest = skipped.filter((k) => !changed.has(k.path.replace(/\/$/, "")));
  if (rest.length === 0) return "";
  const shown = rest
    .slice(0, SKIPPED_SHOWN)
    .map((k) => `${visibleLine(k.path)}${k.reason === SkipReason.NAME_NOT_UTF8 ? " (name not UTF-8)" : ""}`);
  const more = rest.length > SKIPPED_SHOWN ? ` and ${rest.length - SKIPPED_SHOWN} more` : "";
  const except = files.length ? "apart from the files listed above, " : "";
  return `Not tracked by checkpoints (excluded, ignored or too large; ${except}changes there are not compared or restored):\n  ${shown.join(", ")}${more}\n`;
}

export async function restoreCommand(ctx: CliContext, args: ParsedArgs): Promise<number> {
  checkFlags(args, ["mode"]);
  checkPositionals(args, 2);
  const [taskId, checkpointId] = args.positionals;
  if (!taskId || !checkpointId) throw new UsageError("dline restore needs a task id and a checkpoint id.");
  const modes: Record<string, RestoreMode> = {
    "files-and-task": RestoreMode.FILES_AND_TASK,
    files: RestoreMode.FILES,
    task: RestoreMode.TASK,
  };
  const modeName = stringFlag(args, "mode") ?? "files-and-task";
  if (!(modeName in modes)) throw new UsageError("--mode takes files-and-task, files or task.");
  let warned = false;
  const askedAt = Date.now();
  // A restore stopped part-way leaves some files restored and others not: the first Ctrl-C only
  // says it goes on; a second leaves at once, saying how to finish or undo it (the sidecar, whose
  // input then closes, ends what it was doing before it exits). Before, Ctrl-C left at once
  // without a word.
  const onSigint = () => {
    if (warned) {
      ctx.err.write(`${RESTORE_CUT.left(taskId, askedAt)}\n`);
      process.exit(130);
    }
    warned = true;
    ctx.err.write(`${RESTORE_CUT.goesOn}\n`);
  };
  process.on("SIGINT", onSigint);
  try {
    return await withSidecar(ctx, (clients) => restoreThrough(ctx, clients, taskId, checkpointId, modes[modeName]!));
  } catch (err) {
    // Killed part-way, it may have restored some files and not others.
    if (err instanceof SidecarDiedError) ctx.err.write(`${RESTORE_CUT.died(taskId, askedAt)}\n`);
    throw err;
  } finally {
    process.off("SIGINT", onSigint);
  }
}

/**
 * What the CLI says of a restore it did not see end. Not "restore the newest before restore
 * checkpoint": a restore stopped before its own was saved touched no file, and the newest one
 * listed is then an earlier restore's. The next process knows whether it stopped part-way and
 * which checkpoint undoes it (restore-marker.ts); one that ended saved its own after `askedAt`.
 */
const RESTORE_CUT = {
  goesOn:
    "The restore goes on until it has ended: stopped part-way, it would leave some files restored and others not. Press Ctrl-C again to leave now.",
  left: (taskId: string, askedAt: number) =>
    `dline: left before the restore ended: it may have stopped part-way. ${RESTORE_CUT.howTo(taskId, askedAt)}`,
  died: (taskId: string, askedAt: number) =>
    `The restore may have stopped part-way. ${RESTORE_CUT.howTo(taskId, askedAt)}`,
  howTo: (taskId: string, askedAt: number) =>
    `Run it again to finish it. If it did stop part-way, dline checkpoints ${taskId} says so and names the "before restore" checkpoint that puts the files back as they were; if it ended, that is the "before restore" checkpoint it lists from ${listedTime(askedAt)} on (none: it did not begin).`,
};

/** A time as `dline checkpoints` lists it. */
function listedTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace("T", " ");
}

async function restoreThrough(
  ctx: CliContext,
  clients: DlineClients,
  taskId: string,
  checkpointId: string,
  mode: RestoreMode,
): Promise<number> {
  const res = await sayingWhileHeldElsewhere(ctx.err, clients, taskId, async () =>
    clients.checkpoints.restore({
      taskId,
      checkpointId: await fullCheckpointId(clients, taskId, checkpointId),
      mode,
    }),
  );
  // Every field, as before (an empty list is a list), in Connect JSON: no protobuf-es internals.
  if (ctx.json) printJson(ctx, toJson(RestoreResponseSchema, res, { alwaysEmitImplicit: true }));
  else {
    // The task was running (here or in another window): it was stopped before anything was restored.
    if (res.runStopped) ctx.out.write(`the task was running: stopped it first (dline resume ${taskId} goes on)\n`);
    // One line of what was restored: the files, the conversation (cut back to the checkpoint), or both.
    const kept = res.keptPaths.length ? `, kept ${res.keptPaths.length} as they were` : "";
    const files = res.filesRestored
      ? `restored ${res.restoredPaths.length} file(s), deleted ${res.deletedPaths.length}${kept}`
      : "";
    const conversation = res.conversationRestored ? "conversation restored (cut back to the checkpoint)" : "";
    ctx.out.write(`${[files, conversation].filter(Boolean).join("; ") || "nothing restored"}\n`);
    // Each file the restore changed, by name: a deleted file may be one the person made.
    writeNamed(ctx, "restored", res.restoredPaths);
    writeNamed(ctx, "deleted", res.deletedPaths);
    // Each file left as it was, and why: a command may have changed an ignored .env, which the
    // restore did not put back.
    for (const k of res.keptPaths.slice(0, NAMED_SHOWN))
      ctx.out.write(`  kept as is: ${keptReasons[k.reason]}: ${visibleLine(k.path)}\n`);
    if (res.keptPaths.length > NAMED_SHOWN)
      ctx.out.write(`  and ${res.keptPaths.length - NAMED_SHOWN} more kept as they were\n`);
    // Only beside named files: a large node_modules stops the core's look on every restore.
    if (res.keptPaths.length && res.keptPathsIncomplete)
      ctx.out.write("  kept as is: more files the checkpoints do not track may have changed too\n");
    // The person's git history moved since (a task's `git reset`, a branch switched): not undone.
    if (res.repositoryNote) ctx.out.write(`note: ${visibleLine(res.repositoryNote)}\n`);
    if (res.fileError) ctx.err.write(`file restore failed: ${res.fileError}\n`);
    if (res.undoCheckpointId)
      ctx.out.write(`undo with: dline restore ${taskId} ${res.undoCheckpointId} --mode files\n`);
  }
  return res.fileError ? 1 : 0;
}

/** Paths listed after a restore, one per line; a long list ends with how many more. */
const NAMED_SHOWN = 50;

function writeNamed(ctx: CliContext, label: string, paths: readonly string[]): void {
  const forms = unicodeFormNotes(paths);
  for (const p of paths.slice(0, NAMED_SHOWN)) ctx.out.write(`  ${label}: ${visibleLine(p)}${forms.get(p) ?? ""}\n`);
  if (paths.length > NAMED_SHOWN) ctx.out.write(`  and ${paths.length - NAMED_SHOWN} more ${label}\n`);
}

/** Why a restore left a file as it was, as the chat says it. */
const keptReasons: Record<KeptReason, string> = {
  [KeptReason.UNSPECIFIED]: "not restored",
  [KeptReason.TOO_LARGE]: "too large to snapshot",
  [KeptReason.NOT_TRACKED]: "not tracked by checkpoints",
  [KeptReason.BEYOND_LINK]: "a folder on its way is a link now",
};

/**
 * The checkpoint a user named: a full id as it is, or the one checkpoint of the task whose id
 * starts with the hex digits given (the task's output shows ids cut to 12), as git takes a prefix.
 */
async function fullCheckpointId(clients: DlineClients, taskId: string, given: string): Promise<string> {
  // 40 digits may be a whole SHA-1 id or the start of a SHA-256 one. A task has few checkpoints:
  // any number of digits names one when no other starts so ("e5" was refused as no id at all).
  if (!/^[0-9a-f]{1,63}$/.test(given)) return given;
  const { checkpoints } = await clients.checkpoints.listCheckpoints({ taskId });
  if (checkpoints.some((c) => c.id === given)) return given;
  const matches = checkpoints.filter((c) => c.id.startsWith(given));
  const [only] = matches;
  if (only && matches.length === 1) return only.id;
  // A whole id the listing leaves out (its objects lost) goes to the core, which says why.
  if (!only && given.length === 40) return given;
  if (!only) throw new ConnectError(`No checkpoint of task ${taskId} starts with ${given}.`, Code.NotFound);
  throw new ConnectError(
    `${given} starts ${matches.length} checkpoints of task ${taskId}; give more of the id.`,
    Code.InvalidArgument,
  );
}
