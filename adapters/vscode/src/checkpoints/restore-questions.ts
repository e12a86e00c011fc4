import { KeptReason, RestoreMode } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import {
  leftAloneSentence,
  restoreConfirmation,
  runningSentence,
  someNames,
  undoSentence,
  type LeftAlone,
  type RunningTask,
} from "./restore-options.js";

/** A modal question before a restore: its title, its text, and the button that goes ahead. */
export interface RestoreQuestion {
  message: string;
  detail: string;
  /** The one button that restores (VS Code adds Cancel). */
  button: string;
}

/** What a file restore would change, from Compare (undefined when that could not be read). */
export interface RestorePlan {
  restorePaths: string[];
  leftAlone: LeftAlone[];
}

/** The sentence that says the conversation goes back too (Files & Task, Task Only). */
const MESSAGES_DELETED = "The messages after this checkpoint are deleted: the conversation goes back to this point.";

/**
 * The question before a restore chosen in the checkpoint menu, by mode:
 * - Files Only: the files it puts back (Compare's restorePaths), those it leaves, and Undo.
 * - Files & Task: the same, and first that the later messages are deleted; its Undo brings back
 *   the files only (an undo is a files restore to the "before restore" checkpoint: the
 *   conversation stays cut).
 * - Task Only: the later messages are deleted and nothing brings them back; files stay.
 * `unsaved`: files among those written that have unsaved changes (saved first).
 */
export function restoreQuestion(
  mode: RestoreMode,
  plan: RestorePlan | undefined,
  unsaved: readonly string[],
  running: RunningTask,
  shown = 5,
): RestoreQuestion {
  if (mode === RestoreMode.TASK) {
    const first = runningSentence(running, false);
    return {
      message: "Delete the messages after this checkpoint?",
      detail: `${first ? `${first} ` : ""}${MESSAGES_DELETED} Files stay as they are. This cannot be undone.`,
      button: "Restore Task Only",
    };
  }
  if (mode === RestoreMode.FILES_AND_TASK) {
    const files = restoreConfirmation(plan?.restorePaths, shown, unsaved, plan?.leftAlone, false, true);
    const first = runningSentence(running, true);
    return {
      message: "Restore the files and delete the messages after this checkpoint?",
      detail: `${first ? `${first} ` : ""}${MESSAGES_DELETED} ${files}`,
      button: "Restore Files & Task",
    };
  }
  return {
    message: "Restore the files to this checkpoint?",
    detail: restoreConfirmation(plan?.restorePaths, shown, unsaved, plan?.leftAlone, running),
    button: "Restore Files Only",
  };
}

/** Restore All's dry run (EditMessage with dry_run), as much of it as its question needs. */
export interface RestoreAllDryRun {
  restoredPaths: readonly string[];
  deletedPaths: readonly string[];
  keptPaths: readonly { path: string; reason: KeptReason }[];
}

/**
 * The question before Restore All of an edited message (the chat's button), as the checkpoint
 * menu's Restore asks and with what Neovim's Restore All question says: the files it overwrites or
 * brings back and those it deletes (the core's dry run), the person's own changes in them too,
 * the changed files it leaves as they are (`leftAlone`, from a Compare, with what the dry run
 * keeps), that this message and the later ones are deleted, and what Undo brings back.
 */
export function restoreAllQuestion(
  dry: RestoreAllDryRun,
  leftAlone: readonly LeftAlone[],
  unsaved: readonly string[],
  running: RunningTask,
  shown = 5,
): RestoreQuestion {
  const files = (n: number) => `${n} file${n === 1 ? "" : "s"}`;
  const parts: string[] = [];
  const written = dry.restoredPaths.length;
  const deleted = dry.deletedPaths.length;
  if (written) parts.push(`overwrites or brings back ${files(written)} (${someNames(dry.restoredPaths, shown)})`);
  if (deleted) parts.push(`deletes ${files(deleted)} created since (${someNames(dry.deletedPaths, shown)})`);
  const total = written + deleted;
  const filesPart = total
    ? `It puts the files back as they were before this message: it ${parts.join(" and ")}, including changes you made to ${total === 1 ? "it" : "them"} yourself.`
    : "No file changed that it can put back: no file is overwritten.";
  // What the dry run keeps, beside what the Compare found left alone (each path once).
  const named = new Set(leftAlone.map((l) => l.path));
  const kept: LeftAlone[] = [
    ...leftAlone,
    ...dry.keptPaths
      .filter((k) => !named.has(k.path))
      .map((k): LeftAlone => ({
        path: k.path,
        reason: k.reason === KeptReason.TOO_LARGE ? "too large" : "not tracked",
      })),
  ];
  const stays = leftAloneSentence(kept, shown) || "Other files stay as they are.";
  const saved = unsaved.length
    ? ` Unsaved changes in ${someNames(unsaved, shown)} are saved first, so that Undo brings them back too.`
    : "";
  const first = runningSentence(running, true);
  const undo = total ? ` ${undoSentence(total === 1, true)}` : " This cannot be undone.";
  return {
    message: "Restore the files and the conversation to before this message?",
    detail:
      `${first ? `${first} ` : ""}This message and the ones after it are deleted; your edited text stays in the message box. ` +
      `${filesPart} ${stays}${undo}${saved}`,
    button: "Restore All",
  };
}
