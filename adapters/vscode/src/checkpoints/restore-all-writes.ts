import { EditMessageMode, type EditMessageResponse } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";

/** CheckpointService.EditMessage as the client calls it (only the fields a dry run needs). */
export type EditMessageCall = (req: {
  taskId: string;
  messageId: string;
  text: string;
  mode: EditMessageMode;
  dryRun: boolean;
}) => Promise<RestoreAllPlan>;

/** What Restore All of an edited message would do, as the core's dry run answers it. */
export type RestoreAllPlan = Pick<
  EditMessageResponse,
  "restored" | "checkpointId" | "restoredPaths" | "deletedPaths" | "keptPaths"
>;

/**
 * The files Restore All of an edited message will write or delete (workspace-relative, "/"),
 * as the core answers before doing it: EditMessage with dry_run changes nothing and names the
 * checkpoint it restores the files to and those files. The core chooses that checkpoint (the
 * message's own, else the last one before it still part of the task, never an undo point), so
 * what the extension acts on beforehand is what then happens, in any editor and after any restore.
 */
export async function restoreAllWrites(
  editMessage: EditMessageCall,
  taskId: string,
  messageId: string,
  text: string,
): Promise<string[]> {
  const res = await restoreAllPlan(editMessage, taskId, messageId, text);
  return [...res.restoredPaths, ...res.deletedPaths];
}

/** The core's whole dry-run answer for Restore All (changes nothing): for its question, and restoreAllWrites. */
export function restoreAllPlan(
  editMessage: EditMessageCall,
  taskId: string,
  messageId: string,
  text: string,
): Promise<RestoreAllPlan> {
  return editMessage({ taskId, messageId, text, mode: EditMessageMode.RESTORE_ALL, dryRun: true });
}
