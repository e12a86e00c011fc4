/**
 * Where a workspace's capability files (rules, workflows, skills and their files, subagents,
 * MCP descriptors) may be read from: inside the workspace by their real paths, symlinks
 * followed, and never inside Dline's own storage. A repository is untrusted input, and its rules
 * reach the model's prompt with no approval: a link from `.clinerules/` or a skill to ~/.ssh or
 * to the stored keys must not carry their text there (read_file refuses the same paths).
 */
import * as path from "node:path";
import { isInsideFolder, realpathOrUndefined } from "../agent/index.js";

export class ReadBoundary {
  private readonly root: string;
  private readonly storage: string[];

  constructor(workspaceRoot: string, storageRoots: readonly string[]) {
    this.root = realpathOrUndefined(workspaceRoot) ?? path.resolve(workspaceRoot);
    // A workspace inside a storage root (opened there on purpose) keeps its own files readable.
    this.storage = storageRoots
      .filter(Boolean)
      .flatMap((p) => [path.resolve(p), realpathOrUndefined(p) ?? []].flat())
      .filter((s) => !isInsideFolder(s, this.root));
  }

  /** Whether `file` (a file or folder) exists and may be read: its real path is inside the workspace, outside the storage. */
  allows(file: string): boolean {
    const real = realpathOrUndefined(file);
    return real !== undefined && isInsideFolder(this.root, real) && !this.storage.some((s) => isInsideFolder(s, real));
  }
}

/** Why an entry the boundary refused has no content, as listings show it. */
export const OUTSIDE_WORKSPACE = "not read: it links outside the workspace (or into Dline's storage)";
