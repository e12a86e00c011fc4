import { readFileSync, readlinkSync } from "node:fs";
import { commitBody } from "./git-objects.js";
import { CHECKPOINT_IDENTITY, type ShadowGit } from "./git-process.js";
import type { ObjectReader } from "./loose-objects.js";
import { writePack } from "./pack-writer.js";
import { ObjectBatch } from "./tree-editor.js";
import { BeyondLinkDetector, lstatIfPresent, toAbsolute } from "./workspace-paths.js";

/**
 * What a file was just before a tool of the task first changed it, when the task's latest
 * checkpoint does not hold it (an excluded folder, an ignored or environment file, a file left
 * out past a skip limit): a restore to an earlier checkpoint puts this back instead of deleting
 * the file. A restore takes one too before it writes over or deletes a file its undo checkpoint
 * does not hold (over the size limit, say), so that undoing the restore brings the file back. `created`: the file did not exist (the task made it, a restore may remove it);
 * `too_large`: it existed but was over the size limit, so a restore leaves it as it is.
 */
export interface EditCapture {
  path: string;
  /** When it was taken (the repository's stamp clock: later than every earlier checkpoint). */
  at: number;
  kind: "preimage" | "created" | "too_large";
  /** The pre-image's blob and mode (kind "preimage"). */
  id?: string;
  mode?: "100644" | "100755" | "120000";
  /** The file's permission bits (kind "preimage", not a link): a restore that makes it again gives it these. */
  permissions?: number;
  /**
   * When the file last changed before it was taken (its ctime or mtime, the later): a pre-image
   * says what the file was at a checkpoint only if nothing changed it since. Absent in older captures.
   */
  changedAt?: number;
}

/**
 * A capture as it speaks of a checkpoint (capturesAt): itself, or "changed_since" for a
 * pre-image that may hold what a command of the task made of the file after the checkpoint.
 */
export type CaptureAt = EditCapture | { path: string; at: number; kind: "changed_since" };

interface CaptureRecord {
  v: 1;
  task: string;
  captures: EditCapture[];
}

export function capturesRef(taskId: string): string {
  return `refs/dline/preimages/${taskId}`;
}

/** Refs of a ref store and their commits, as CheckpointLog offers them (files store: direct writes under the lock). */
export interface RefStore {
  resolveRef(ref: string): Promise<string | undefined>;
  setRef(ref: string, commit: string): Promise<void>;
}

/**
 * The pre-images of one shadow repository, one record per task: a parentless commit at
 * `refs/dline/preimages/<task>` whose message lists the captures (JSON) and whose tree holds
 * every captured blob under its id (so each stays reachable, whatever paths it had). Written
 * before the tool touches the file (blob, tree and commit as one pack, then the ref); callers
 * hold the repository lock. Deleting the task deletes the ref.
 */
export class EditCaptures {
  private readonly cache = new Map<string, { commit: string; record: CaptureRecord }>();

  constructor(
    private readonly git: ShadowGit,
    private readonly refs: RefStore,
    private readonly objects: ObjectReader,
    private readonly workspaceRoot: string,
    private readonly sizeLimitBytes: number,
  ) {}

  /** The captures of a task, oldest first. */
  async list(taskId: string): Promise<EditCapture[]> {
    return (await this.read(taskId))?.record.captures ?? [];
  }

  /**
   * Captures `repoPath` as it is now. Called only when the task's latest checkpoint does not
   * hold the path. A path already captured after `since` (the latest checkpoint's time) is not
   * captured again: the first capture is what the checkpoint before it saw.
   */
  async capture(taskId: string, repoPath: string, at: number, since: number): Promise<EditCapture | undefined> {
    return (await this.captureAll(taskId, [repoPath], at, since))[0];
  }

  /**
   * Captures each of `repoPaths` as it is now, in one record write (one pack, one ref): what
   * `capture` does for one path. Answers the captures taken (paths captured after `since`
   * already are left out).
   */
  async captureAll(taskId: string, repoPaths: readonly string[], at: number, since: number): Promise<EditCapture[]> {
    const previous = await this.read(taskId);
    const captures = previous?.record.captures ?? [];
    const fresh = [...new Set(repoPaths)].filter((p) => !captures.some((c) => c.path === p && c.at > since));
    if (!fresh.length) return [];
    const batch = new ObjectBatch();
    // A path with a link on its way (a command made sub/ a link) is not the workspace's file but
    // one the link points to, maybe outside: never read, so no restore writes it back through the link.
    const links = new BeyondLinkDetector(this.workspaceRoot);
    const taken = fresh.filter((p) => !links.beyondLink(p)).map((p) => this.take(p, at, batch));
    if (!taken.length) return [];
    const record: CaptureRecord = { v: 1, task: taskId, captures: [...captures, ...taken] };
    const blobs = [...new Set(record.captures.flatMap((c) => (c.id ? [c.id] : [])))].sort();
    const tree = batch.put(
      "tree",
      Buffer.concat(
        blobs.map((id) => Buffer.concat([Buffer.from(`100644 ${id}\0`, "latin1"), Buffer.from(id, "hex")])),
      ),
    );
    const message = `Dline pre-images\n\n${JSON.stringify(record)}\n`;
    const commit = batch.put("commit", commitBody(tree, CHECKPOINT_IDENTITY, at, message));
    // A captured blob may be in a pack already written; the pack then repeats it (harmless).
    await writePack(this.objects.objectsDir, batch.objects);
    await this.refs.setRef(capturesRef(taskId), commit);
    this.cache.set(taskId, { commit, record });
    return taken;
  }

  /** Reads the file (synchronously: a tool waits for this, and the file is at most the size limit). */
  private take(repoPath: string, at: number, batch: ObjectBatch): EditCapture {
    const abs = toAbsolute(this.workspaceRoot, repoPath);
    const st = lstatIfPresent(abs);
    if (!st || st.isDirectory()) return { path: repoPath, at, kind: "created" };
    if (st.size > this.sizeLimitBytes) return { path: repoPath, at, kind: "too_large" };
    const changedAt = Math.max(st.ctimeMs, st.mtimeMs);
    if (st.isSymbolicLink())
      return {
        path: repoPath,
        at,
        kind: "preimage",
        mode: "120000",
        id: batch.put("blob", Buffer.from(readlinkSync(abs))),
        changedAt,
      };
    // A named pipe, socket or device: reading it could wait forever; a restore leaves it as it is.
    if (!st.isFile()) return { path: repoPath, at, kind: "too_large" };
    let content: Buffer;
    try {
      content = readFileSync(abs);
    } catch {
      // Unreadable (permissions, a socket): the tool will fail on it too; nothing to keep.
      return { path: repoPath, at, kind: "too_large" };
    }
    return {
      path: repoPath,
      at,
      kind: "preimage",
      mode: st.mode & 0o111 ? "100755" : "100644",
      id: batch.put("blob", content),
      permissions: st.mode & 0o777,
      changedAt,
    };
  }

  private async read(taskId: string): Promise<{ commit: string; record: CaptureRecord } | undefined> {
    const commit = await this.refs.resolveRef(capturesRef(taskId));
    if (!commit) {
      this.cache.delete(taskId);
      return undefined;
    }
    const cached = this.cache.get(taskId);
    if (cached?.commit === commit) return cached;
    const object = this.objects.read(commit);
    const body =
      object?.type === "commit" ? object.body.toString("utf8") : await this.git.text(["cat-file", "commit", commit]);
    const line = body.split("\n").find((l) => l.startsWith("{"));
    const record = line ? (JSON.parse(line) as CaptureRecord) : undefined;
    if (!record || record.v !== 1 || !Array.isArray(record.captures)) return undefined;
    const entry = { commit, record };
    this.cache.set(taskId, entry);
    return entry;
  }
}

/**
 * The task's captures as they speak of a checkpoint of `time`. A pre-image stands for the file
 * as it was before the task changed it (a change the person or another task made since the
 * checkpoint stays). One of a file changed after `time` and taken after a command of the task
 * ran since then (`commandsAt`: the times of the checkpoints saved after its commands) may hold
 * what that command made of it: "changed_since", what it was at `time` is unknown. That is a
 * restore's own pre-image of a file a command had changed (kept for the restore's undo), or a
 * tool's of a file a command of an earlier turn changed.
 */
export function capturesAt(captures: readonly EditCapture[], time: number, commandsAt: readonly number[]): CaptureAt[] {
  return captures.map((c) =>
    c.kind === "preimage" &&
    c.at > time &&
    c.changedAt !== undefined &&
    c.changedAt > time &&
    commandsAt.some((t) => t > time && t <= c.at)
      ? { path: c.path, at: c.at, kind: "changed_since" }
      : c,
  );
}

/** The first capture of `repoPath` taken after `time` (what the file was at a checkpoint of that time). */
export function captureAfter(captures: readonly CaptureAt[], repoPath: string, time: number): CaptureAt | undefined {
  return captures.find((c) => c.path === repoPath && c.at > time);
}
