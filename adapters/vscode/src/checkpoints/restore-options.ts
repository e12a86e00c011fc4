import { KeptReason, RestoreMode } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import { visibleLine } from "../text/visible-text.js";

/** One entry of the restore menu, with the wording of docs/checkpoints.md. */
export interface RestoreOption {
  label: string;
  /** The menu text of docs/checkpoints.md, "Restoring a checkpoint". */
  description: string;
  mode: RestoreMode;
  /** Shown under "More options". */
  more: boolean;
  /** Shown but not selectable (Restore Files Only right after a file restore). */
  disabled: boolean;
}

export interface RestoreTarget {
  hasFiles: boolean;
  /** The checkpoint was created by context compaction ("Compaction checkpoint"). */
  compaction: boolean;
  /** Files were restored to it and no checkpoint was saved since ("Checkpoint (restored)"). */
  restored: boolean;
  /**
   * The checkpoint a file restore saved first (its undo point): it follows no message, so only
   * its files are restored (the core refuses the conversation).
   */
  undoPoint?: boolean;
}

export const MORE_OPTIONS_LABEL = "More options";

/** Beside a restore that is shown but cannot be chosen now (VS Code's quick pick has no disabled rows). */
export const FILES_ALREADY_RESTORED = "(files already restored)";

/** One row of the restore quick pick: an option (`mode`), "More options" (`more`), or an option not available now (`unavailable`). */
export interface RestoreMenuItem {
  label: string;
  description?: string;
  detail?: string;
  mode?: RestoreMode;
  more?: boolean;
  /** Why this option cannot be chosen now: choosing it says so and restores nothing. */
  unavailable?: string;
}

/**
 * The rows of the restore quick pick: the first list, and the one "More options" opens. An
 * option that is not available now (Restore Files Only right after a file restore) stays in its
 * list, greyed by its icon and "(files already restored)", with the reason as its detail.
 */
export function restoreMenu(options: readonly RestoreOption[]): { main: RestoreMenuItem[]; more: RestoreMenuItem[] } {
  const toItem = (o: RestoreOption): RestoreMenuItem =>
    o.disabled
      ? {
          label: `$(circle-slash) ${o.label}`,
          description: FILES_ALREADY_RESTORED,
          detail: `Not available: ${unavailableReason(o)}`,
          mode: o.mode,
          unavailable: unavailableReason(o),
        }
      : { label: o.label, detail: o.description, mode: o.mode };
  const main = options.filter((o) => !o.more).map(toItem);
  // An option not available now goes last: the one the quick pick selects first can be chosen.
  const more = options
    .filter((o) => o.more)
    .sort((a, b) => Number(a.disabled) - Number(b.disabled))
    .map(toItem);
  if (more.length > 0) main.push({ label: MORE_OPTIONS_LABEL, more: true });
  return { main, more };
}

function unavailableReason(option: RestoreOption): string {
  return option.mode === RestoreMode.FILES
    ? "the files were already restored to this checkpoint and no checkpoint was saved since, so there is nothing to revert. It is offered again after the next checkpoint; Restore Task Only still works."
    : "this restore cannot be used for this checkpoint now.";
}

/** The editor's side of the restore quick pick (VS Code's showQuickPick and a notice, or a test's). */
export interface RestoreMenuUi {
  pick(items: RestoreMenuItem[], title: string, placeHolder?: string): PromiseLike<RestoreMenuItem | undefined>;
  explain(message: string): void;
}

/**
 * The restore quick pick: the chosen mode, or undefined when nothing is to be done (dismissed,
 * or an option not available now was chosen: then the person is told why).
 */
export async function pickRestore(
  options: readonly RestoreOption[],
  ui: RestoreMenuUi,
): Promise<RestoreMode | undefined> {
  const menu = restoreMenu(options);
  const first = await ui.pick(menu.main, "Restore checkpoint", "Restore this checkpoint");
  if (!first) return undefined;
  const chosen = first.more ? await ui.pick(menu.more, "Restore checkpoint: more options") : first;
  if (!chosen) return undefined;
  const option = options.find((o) => o.mode === chosen.mode);
  if (!option) return undefined;
  if (option.disabled) {
    ui.explain(unavailableRestoreMessage(option));
    return undefined;
  }
  return option.mode;
}

/** What the person reads on choosing an option that is not available now. */
export function unavailableRestoreMessage(option: RestoreOption): string {
  return `Dline: ${option.label} is not available: ${unavailableReason(option)}`;
}

/**
 * The restore menu for one checkpoint. Without a file snapshot, or for a compaction
 * checkpoint, only Restore Task Only is offered; for a restore's undo point, only Restore Files
 * Only; after a file restore, Restore Files Only is disabled until a new checkpoint is saved.
 */
export function restoreOptions(target: RestoreTarget): RestoreOption[] {
  const taskOnly: RestoreOption = {
    label: "Restore Task Only",
    description: "Clear messages after this point",
    mode: RestoreMode.TASK,
    more: true,
    disabled: false,
  };
  if (!target.hasFiles || target.compaction) return [{ ...taskOnly, more: false }];
  const filesOnly: RestoreOption = {
    label: "Restore Files Only",
    description: "Revert files to this checkpoint",
    mode: RestoreMode.FILES,
    more: true,
    disabled: target.restored,
  };
  if (target.undoPoint) return [{ ...filesOnly, more: false }];
  return [
    {
      label: "Restore Files & Task",
      description: "Revert files and clear messages after this point",
      mode: RestoreMode.FILES_AND_TASK,
      more: false,
      disabled: false,
    },
    filesOnly,
    taskOnly,
  ];
}

/** How the marker reads in the chat. */
export function checkpointLabel(target: RestoreTarget): string {
  if (target.compaction) return "Compaction checkpoint";
  return target.restored ? "Checkpoint (restored)" : "Checkpoint";
}

/** Kept files a restore's warning names (a command may have changed many an ignored file). */
const KEPT_SHOWN = 10;

/** What a file restore changed, and the files it left as they were (and why), for its notices. */
export function restoreNotices(res: {
  restoredPaths: readonly string[];
  deletedPaths: readonly string[];
  keptPaths: readonly { path: string; reason: KeptReason }[];
  /** The core's look for changed files the checkpoints do not track stopped at its limit. */
  keptPathsIncomplete?: boolean;
  /** The task was running (here or in another window): the core stopped it before restoring. */
  runStopped?: boolean;
  /** The person's git repository moved since the checkpoint, which a restore does not undo. */
  repositoryNote?: string;
}): { info: string; warning?: string } {
  const files = fileNotices(res);
  if (!res.repositoryNote) return files;
  const note = `Dline: ${visibleLine(res.repositoryNote)}`;
  return { info: files.info, warning: files.warning ? `${files.warning} ${note}` : note };
}

function fileNotices(res: {
  restoredPaths: readonly string[];
  deletedPaths: readonly string[];
  keptPaths: readonly { path: string; reason: KeptReason }[];
  keptPathsIncomplete?: boolean;
  runStopped?: boolean;
}): { info: string; warning?: string } {
  const count = res.restoredPaths.length + res.deletedPaths.length;
  const kept = res.keptPaths.length;
  const info =
    `Dline: ${res.runStopped ? "the task was running and was stopped first; " : ""}` +
    `files restored to the checkpoint (${count} file${count === 1 ? "" : "s"}` +
    `${kept ? `; ${kept} kept as ${kept === 1 ? "it was" : "they were"}` : ""}).`;
  if (!kept) return { info };
  // Said only beside named files: a large node_modules stops the look on every restore.
  const maybeMore = res.keptPathsIncomplete
    ? " More files the checkpoints do not track may have changed too; they were left as they are."
    : "";
  const why = (reason: KeptReason) =>
    reason === KeptReason.TOO_LARGE
      ? "too large to snapshot"
      : reason === KeptReason.NOT_TRACKED
        ? "not tracked by checkpoints"
        : reason === KeptReason.BEYOND_LINK
          ? "a folder on its way is a link now"
          : "not restored";
  const list = res.keptPaths
    .slice(0, KEPT_SHOWN)
    .map((k) => `${visibleLine(k.path)} (${why(k.reason)})`)
    .join(", ");
  const more = kept > KEPT_SHOWN ? ` and ${kept - KEPT_SHOWN} more` : "";
  return { info, warning: `Dline: kept as is: ${list}${more}.${maybeMore}` };
}

/**
 * The error when a restore's file part failed. Files & Task (and Restore All) restore the
 * conversation all the same: said first, where the error read as if nothing had happened. The
 * core's text says why ("Restoring files failed: …"): not said twice.
 */
export function fileErrorNotice(fileError: string, conversationRestored: boolean): string {
  const conversation = conversationRestored
    ? "the conversation was restored to the checkpoint, but not the files. "
    : "";
  return `Dline: ${conversation}${visibleLine(fileError)}`;
}

/** The action on a file restore's notice that puts the files back as they were before it. */
export const UNDO_RESTORE = "Undo";

/**
 * The detail of the confirmation before a file restore: the files changed since the checkpoint
 * that the restore will change (Compare's `restorePaths`; undefined when it could not be read)
 * are put back, the person's own edits in them too, and Undo on the notice after it brings them
 * back. Those of them open with unsaved changes (`unsaved`) are saved first, and it says so.
 * The changed files it leaves as they are (`leftAlone`: not tracked by checkpoints, ...) are
 * named beforehand, so that no one learns only afterwards that those do not come back.
 */
export function restoreConfirmation(
  changed: readonly string[] | undefined,
  shown = 5,
  unsaved: readonly string[] = [],
  leftAlone: readonly LeftAlone[] = [],
  /**
   * The task runs: the core stops it before restoring, which the detail says first. "command":
   * a command of it runs, and what it changes until it is stopped is restored too.
   */
  running: boolean | "task" | "command" = false,
  /** Restore Files & Task: Undo brings back the files, not the messages it deletes. */
  messagesToo = false,
): string {
  const detail = filesConfirmation(changed, shown, unsaved, leftAlone, messagesToo);
  const first = runningSentence(running === true ? "task" : running, true);
  return first ? `${first} ${detail}` : detail;
}

/** What runs when a restore is asked: nothing (false), the task, or the task and one of its commands. */
export type RunningTask = false | "task" | "command";

/**
 * The question's first sentence when the task runs: the core stops it (and its command) before
 * restoring. For a file restore (`files`), what that command changes until then is undone too:
 * the core saves its turn first and restores what it changed (Compare's restorePaths already
 * name what it changed so far). "" when nothing runs.
 */
export function runningSentence(running: RunningTask, files: boolean): string {
  if (!running) return "";
  if (running === "task") return "The task is running: it is stopped first; Resume goes on afterwards.";
  return files
    ? "The task is running: it is stopped first, with its command, and what the command changes until then is undone too. Resume goes on afterwards."
    : "The task is running: it is stopped first, with its command. Resume goes on afterwards.";
}

/** The first `shown` paths, then how many more: "a.js, b.js and 3 more". */
export function someNames(paths: readonly string[], shown: number): string {
  const more = paths.length > shown ? ` and ${paths.length - shown} more` : "";
  return `${paths.slice(0, shown).map(visibleLine).join(", ")}${more}`;
}

/** The confirmation's Undo sentence: the files only, when the restore also deletes messages. */
export function undoSentence(one: boolean, messagesToo: boolean): string {
  return messagesToo
    ? `Undo on the notice afterwards puts the files back as they are now, but not the deleted messages.`
    : `Undo on the notice afterwards puts ${one ? "it back as it is" : "them back as they are"} now.`;
}

function filesConfirmation(
  changed: readonly string[] | undefined,
  shown: number,
  unsaved: readonly string[],
  leftAlone: readonly LeftAlone[],
  messagesToo: boolean,
): string {
  const one = changed?.length === 1;
  const undo = undoSentence(one, messagesToo);
  const names = (paths: readonly string[]) => someNames(paths, shown);
  const saved = unsaved.length
    ? ` Unsaved changes in ${names(unsaved)} are saved first, so that Undo brings them back too.`
    : "";
  if (changed === undefined)
    return `Files changed since this checkpoint, by Dline or by you, will be overwritten with their checkpoint version, and files created since will be deleted. ${undo}${saved}`;
  const kept = leftAloneSentence(leftAlone, shown);
  if (changed.length === 0)
    return kept
      ? `No file this restore can put back changed since this checkpoint: nothing will be overwritten. ${kept}`
      : "No file changed since this checkpoint: nothing will be overwritten.";
  const n = changed.length;
  return `${n} file${n === 1 ? "" : "s"} changed since this checkpoint (${names(changed)}) will be put back as the checkpoint has ${n === 1 ? "it" : "them"} (overwritten, deleted if created since, or brought back if deleted), including changes you made to ${n === 1 ? "it" : "them"} yourself. ${kept || "Other files stay as they are."} ${undo}${saved}`;
}

/** Why a changed file stays as it is through a file restore (the confirmation's words). */
export type LeftAloneReason = "not tracked" | "too large" | "not changed by this task";

/** A file changed since the checkpoint that a file restore to it leaves as it is. */
export interface LeftAlone {
  path: string;
  reason: LeftAloneReason;
}

/**
 * The files of a Compare a file restore leaves as they are: those of `files` not among its
 * `restorePaths`. What the checkpoints do not track (ignored, excluded: `notTracked`, a folder as
 * "build/") cannot come back; a file over the size limit had no version kept; any other is a
 * change outside what the task did (the restore puts back only what the task changed).
 */
export function leftAloneByRestore(
  files: readonly { path: string; notTracked: boolean; tooLarge: boolean }[],
  restorePaths: readonly string[],
): LeftAlone[] {
  const restored = new Set(restorePaths);
  return files
    .filter((f) => !restored.has(f.path))
    .map((f) => ({
      path: f.path,
      reason: f.notTracked ? "not tracked" : f.tooLarge ? "too large" : "not changed by this task",
    }));
}

const LEFT_ALONE_WHY: Record<LeftAloneReason, string> = {
  "not tracked": "not tracked by checkpoints",
  "too large": "too large to snapshot",
  "not changed by this task": "not changed by this task",
};

/**
 * "2 changed files stay as they are, not restored: .env, build/ (not tracked by checkpoints)":
 * the first `shown` names, grouped by why, then how many more; "" when there are none.
 */
export function leftAloneSentence(leftAlone: readonly LeftAlone[], shown = 5): string {
  if (leftAlone.length === 0) return "";
  const order: LeftAloneReason[] = ["not tracked", "too large", "not changed by this task"];
  const sorted = order.flatMap((reason) => leftAlone.filter((l) => l.reason === reason));
  const named = sorted.slice(0, shown);
  const groups = order.flatMap((reason) => {
    const paths = named.filter((l) => l.reason === reason).map((l) => visibleLine(l.path));
    return paths.length ? [`${paths.join(", ")} (${LEFT_ALONE_WHY[reason]})`] : [];
  });
  const more = sorted.length > shown ? ` and ${sorted.length - shown} more` : "";
  const n = leftAlone.length;
  return `${n} changed file${n === 1 ? "" : "s"} will stay as ${n === 1 ? "it is" : "they are"}, not restored: ${groups.join("; ")}${more}.`;
}
