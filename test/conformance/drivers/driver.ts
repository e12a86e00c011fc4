import type { TestRoots } from "../../helpers/sidecar.js";

/** What a driver gets: isolated roots, the scenario's workspace, the scripted model's URL. */
export interface DriverContext {
  roots: TestRoots;
  workspace: string;
  modelUrl: string;
}

/** One changed file as Compare reported it to the client, normalised. */
export interface ComparedFile {
  path: string;
  status: string;
}

export interface DriverResult {
  taskId: string;
  compare: ComparedFile[];
}

/**
 * A client playing the scenario: `play` runs the task (approving everything, answering the
 * follow-up with its first option), compares with the baseline checkpoint, restores files
 * only to it, and edits the last message sent with Restore All; `deleteTask` deletes the task.
 */
export interface Driver {
  name: string;
  play(ctx: DriverContext): Promise<DriverResult>;
  deleteTask(ctx: DriverContext, taskId: string): Promise<void>;
}

export function statusName(status: string): string {
  return status.replace(/^FILE_STATUS_/, "").toLowerCase();
}
