import { EditMessageMode, type EditMessageResponse } from "../../../../core/src/gen/dline/v1/checkpoint_pb.js";

/** CheckpointService.EditMessage as the client calls it (only the fields a dry run needs). */
export type EditMessageCall = (req: {
  taskId: string;
  messageId: string;
  text: string;
  mode: EditMessageMode;
  dryRun: boolean;
}) => Promise<Pick<EditMessageResponse, "checkpointId" | "restoredPaths" | "deletedPaths">>;

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
  const res = await editMessage({ taskId, messageId, text, mode: EditMessageMode.RESTORE_ALL, dryRun: true });
  return [...res.restoredPaths, ...res.deletedPaths];
}
