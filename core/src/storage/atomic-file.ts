import * as fs from "node:fs";
import * as path from "node:path";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "./private-mode.js";

/**
 * The one way a file is replaced: a temporary file beside it, written and fsynced, renamed over
 * it, then the folder fsynced so the rename itself survives a crash. A reader, a killed writer
 * or a power cut therefore leaves the old or the new content, never a torn or empty file.
 * Async for the stores that can wait, sync for the task files written inside SQLite
 * transactions and shutdown paths; both give the same guarantees.
 */
export interface AtomicWriteOptions {
  /**
   * The file's mode, set exactly whatever the umask (default 0o600: the core's files are the
   * user's alone). Missing folders are created 0o700, like every folder under the roots.
   */
  mode?: number;
  /**
   * A file of the user's workspace (a tool's edit): the replaced file keeps its mode and a new
   * one gets the umask's default; the folder must exist (the caller creates it with the
   * workspace's own modes). Only this file's own temp files of a dead writer are swept there
   * (`.NAME.PID.N.tmp`: a sidecar killed mid-write left them in the person's folder for good).
   */
  userFile?: boolean;
  /** The folder must exist (it is not created): a write into a folder removed meanwhile fails with ENOENT. */
  folderMustExist?: boolean;
}

let tempCounter = 0;
/** Folders already swept for orphaned temp files by this process, by target file. */
const swept = new Set<string>();

function tempPrefix(file: string): string {
  return `.${path.basename(file)}.`;
}

function tempPathFor(file: string): string {
  return path.join(path.dirname(file), `${tempPrefix(file)}${process.pid}.${++tempCounter}.tmp`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether a file name is a temporary file of a write under way in a live process (this one, a
 * tool's edit, or another sidecar's): `.NAME.PID.N.tmp` beside the file it replaces, gone once
 * renamed over it. A scan of the workspace that meets one must not record it as a file.
 */
export function isWriteInProgressTemp(name: string): boolean {
  const match = /^\..+\.(\d+)\.\d+\.tmp$/.exec(name);
  return match !== null && (Number(match[1]) === process.pid || isAlive(Number(match[1])));
}

/** Temp files of `file` that a writer killed between open and rename left (its pid is gone). */
function orphanTemps(file: string, names: string[]): string[] {
  const prefix = tempPrefix(file);
  return names
    .filter((name) => {
      const match = name.startsWith(prefix) ? /^(\d+)\.\d+\.tmp$/.exec(name.slice(prefix.length)) : null;
      return match !== null && Number(match[1]) !== process.pid && !isAlive(Number(match[1]));
    })
    .map((name) => path.join(path.dirname(file), name));
}

async function removeOrphanTemps(file: string): Promise<void> {
  if (swept.has(file)) return;
  swept.add(file);
  const names = await fs.promises.readdir(path.dirname(file)).catch(() => [] as string[]);
  for (const orphan of orphanTemps(file, names)) await fs.promises.rm(orphan, { force: true });
}

function removeOrphanTempsSync(file: string): void {
  if (swept.has(file)) return;
  swept.add(file);
  let names: string[];
  try {
    names = fs.readdirSync(path.dirname(file));
  } catch {
    return;
  }
  for (const orphan of orphanTemps(file, names)) fs.rmSync(orphan, { force: true });
}

/** The mode the written file gets: exact, kept from the file it replaces, or left to the umask. */
async function modeFor(file: string, options: AtomicWriteOptions): Promise<number | undefined> {
  if (!options.userFile) return options.mode ?? PRIVATE_FILE_MODE;
  return fs.promises.stat(file).then(
    (s) => s.mode & 0o7777,
    () => undefined,
  );
}

function modeForSync(file: string, options: AtomicWriteOptions): number | undefined {
  if (!options.userFile) return options.mode ?? PRIVATE_FILE_MODE;
  try {
    return fs.statSync(file).mode & 0o7777;
  } catch {
    return undefined;
  }
}

export async function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  if (!options.userFile) await fs.promises.mkdir(path.dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
  await removeOrphanTemps(file);
  const mode = await modeFor(file, options);
  const temp = tempPathFor(file);
  const handle = await fs.promises.open(temp, "w", mode ?? 0o666);
  try {
    await handle.writeFile(data);
    // open() applies the umask; a mode we were given (or kept) must be exact.
    if (mode !== undefined) await handle.chmod(mode);
    await handle.sync();
  } catch (err) {
    await handle.close().catch(() => {});
    await fs.promises.rm(temp, { force: true });
    throw err;
  }
  await handle.close();
  try {
    await fs.promises.rename(temp, file);
  } catch (err) {
    await fs.promises.rm(temp, { force: true });
    throw err;
  }
  await syncFolder(path.dirname(file));
}

export function writeFileAtomicSync(file: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  if (!options.userFile && !options.folderMustExist)
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
  removeOrphanTempsSync(file);
  const mode = modeForSync(file, options);
  const temp = tempPathFor(file);
  const fd = fs.openSync(temp, "w", mode ?? 0o666);
  try {
    fs.writeFileSync(fd, data);
    if (mode !== undefined) fs.fchmodSync(fd, mode);
    fs.fsyncSync(fd);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(temp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  try {
    fs.renameSync(temp, file);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw err;
  }
  syncFolderSync(path.dirname(file));
}

async function syncFolder(dir: string): Promise<void> {
  if (process.platform === "win32") return;
  const handle = await fs.promises.open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function syncFolderSync(dir: string): void {
  if (process.platform === "win32") return;
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Where a damaged file is kept: `<name>.corrupt-<time>` beside it (the time filesystem-safe
 * ISO-8601), with `-<n>` added while that name is taken, so an earlier copy is never replaced.
 */
export function corruptCopyPath(file: string, now = new Date()): string {
  const base = `${file}.corrupt-${now.toISOString().replace(/[:.]/g, "-")}`;
  let target = base;
  for (let n = 1; fs.existsSync(target); n++) target = `${base}-${n}`;
  return target;
}

/** Moves a damaged file (or folder) aside to its `corruptCopyPath`, never deleting it; returns where it went. */
export function moveAsideSync(file: string): string {
  const aside = corruptCopyPath(file);
  fs.renameSync(file, aside);
  return aside;
}
