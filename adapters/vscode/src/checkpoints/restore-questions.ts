import { RestoreMode } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";
import { restoreConfirmation, runningSentence, type LeftAlone, type RunningTask } from "./restore-options.js";

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
