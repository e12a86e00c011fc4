/**
 * Edits computed before they are written. An edit tool first prepares the exact content of
 * every file it changes (what the person is asked to approve), then commits it: the commit
 * checks that each file is still what the preparation read and writes exactly the prepared
 * text. A file that changed in between is refused with StaleEditError (the runtime prepares
 * and asks again), so what was approved is what is written.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { DlineError } from "../../errors.js";
import { writeFileAtomic } from "../../storage/index.js";
import { previewDiff } from "./edit-preview-diff.js";
import { assertRegularOrAbsent, readRegularFile } from "./regular-file.js";
import { assertNotBeingEdited } from "./unsaved-in-editor.js";
import type { ToolContext } from "./types.js";
import type { FileChange, PreparedEdit } from "./prepared-edit.js";

export type { FileChange, PreparedEdit } from "./prepared-edit.js";

/** Texts larger than this (characters) are left out of previews; the edit itself is not limited. */
export const EDIT_PREVIEW_MAX_CHARS = 256 * 1024;

/** The file changed between the preparation (and the approval) and the commit: nothing was written. */
export class StaleEditError extends DlineError {
  constructor(readonly relativePath: string) {
    super("aborted", `"${relativePath}" changed after the edit was prepared; nothing was written.`);
    this.name = "StaleEditError";
  }
}

/** Files larger than this are edited whole (write_to_file) but never read for a preview or SEARCH/REPLACE. */
export const MAX_EDIT_READ_BYTES = 16 * 1024 * 1024;

function digest(text: string | Buffer): string {
  return createHash("sha256").update(text).digest("hex");
}

function looksBinary(bytes: Buffer): boolean {
  return bytes.subarray(0, 8000).includes(0);
}

/** A file as an edit read it. `text` is absent when it is over MAX_EDIT_READ_BYTES (its digest is then of its size and time). */
export interface CurrentFile {
  text: string | undefined;
  binary: boolean;
  digest: string;
  /** Its size in bytes (of the editor's text when that is what was read). */
  bytes: number;
}

/**
 * The file as an edit sees it: the editor's view (unsaved changes) when the host offers one,
 * else the disk. Undefined when it does not exist. Regular files only, opened without blocking
 * (a FIFO never hangs an edit); a file too large to read is described by its size and time.
 */
export async function readForEdit(
  absolutePath: string,
  ctx: ToolContext,
  tool: string,
  shown: string,
): Promise<CurrentFile | undefined> {
  if (!(await assertRegularOrAbsent(absolutePath, tool, shown))) return undefined;
  const stat = await fs.stat(absolutePath);
  if (stat.size > MAX_EDIT_READ_BYTES)
    return {
      text: undefined,
      binary: false,
      digest: `large:${stat.size}:${stat.mtimeMs}:${stat.ino}`,
      bytes: stat.size,
    };
  const bytes = await readRegularFile(absolutePath, tool, shown, MAX_EDIT_READ_BYTES);
  if (looksBinary(bytes)) return { text: undefined, binary: true, digest: digest(bytes), bytes: bytes.length };
  const text = ctx.environment?.readTextFile
    ? await ctx.environment.readTextFile(absolutePath, ctx.signal)
    : bytes.toString("utf8");
  return { text, binary: false, digest: digest(text), bytes: Buffer.byteLength(text) };
}

/** A change of one file from what `readForEdit` returned to `after` (undefined: delete). */
export function fileChange(
  relativePath: string,
  absolutePath: string,
  current: CurrentFile | undefined,
  after: string | undefined,
): FileChange {
  const before = current?.text;
  const unread = current !== undefined && before === undefined;
  const large = (before?.length ?? 0) > EDIT_PREVIEW_MAX_CHARS || (after?.length ?? 0) > EDIT_PREVIEW_MAX_CHARS;
  return {
    path: relativePath,
    absolutePath,
    status: current === undefined ? "added" : after === undefined ? "deleted" : "modified",
    before,
    after,
    beforeDigest: current?.digest,
    previewTruncated: unread || large,
    previewDiff: !unread && large ? previewDiff(relativePath, before, after, EDIT_PREVIEW_MAX_CHARS) : undefined,
    ...(unread && after !== undefined && after.length <= EDIT_PREVIEW_MAX_CHARS ? { previewAfter: after } : {}),
    beforeBytes: current?.bytes ?? 0,
    afterBytes: after === undefined ? 0 : Buffer.byteLength(after),
    beforeBinary: current?.binary ?? false,
  };
}

/** Throws StaleEditError when a file is no longer what the preparation read. */
export async function assertUnchanged(edit: PreparedEdit, ctx: ToolContext): Promise<void> {
  for (const change of edit.changes) {
    const now = await readForEdit(change.absolutePath, ctx, "edit", change.path);
    if (now?.digest !== change.beforeDigest) throw new StaleEditError(change.path);
  }
}

/**
 * Whether every file is still what the preparation read. False (prepare again, which reports
 * any problem as the call's failure) also when a file can no longer be read as it was.
 */
export async function isCurrent(edit: PreparedEdit, ctx: ToolContext): Promise<boolean> {
  try {
    await assertUnchanged(edit, ctx);
    return true;
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    return false;
  }
}

/**
 * Writes a prepared edit: once the checkpoints kept every file (ToolContext.beforeEdit), checks
 * each (nothing is written if one changed, or if the editor reports one as modified and unsaved:
 * the person is editing it, or if the task was stopped meanwhile), then
 * writes each file's prepared text through the host editor when it offers that, else
 * atomically on disk, and records the edited paths.
 */
export async function commitEdit(edit: PreparedEdit, ctx: ToolContext): Promise<void> {
  // Checkpoints keep what each file was before it changes: the task's baseline first, which a
  // large workspace's first scan makes a wait of seconds.
  for (const change of edit.changes) await ctx.beforeEdit?.(change.path);
  // Then nothing is written by a task stopped meanwhile, nor over a file changed meanwhile.
  ctx.signal.throwIfAborted();
  assertNotBeingEdited(edit, ctx.unsavedInEditor?.() ?? [], ctx.workspaceRoot);
  await assertUnchanged(edit, ctx);
  for (const change of edit.changes) {
    if (change.after === undefined) {
      await fs.rm(change.absolutePath, { force: true });
    } else {
      await fs.mkdir(path.dirname(change.absolutePath), { recursive: true });
      if (ctx.environment?.writeTextFile)
        await ctx.environment.writeTextFile(change.absolutePath, change.after, ctx.signal);
      else await writeFileAtomic(change.absolutePath, change.after, { userFile: true });
    }
    ctx.recordEditedPath(change.path);
  }
}
