/**
 * Cheap re-scans of the capability folders at every turn: directory listings are read each
 * time (a change on disk applies to the next turn), file contents only when their mtime or
 * size changed.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { ReadBoundary } from "./read-boundary.js";
import { compareNames } from "../text/name-order.js";

/** Capability files are small; a larger one is cut here so one file cannot flood the prompt. */
export const MAX_CAPABILITY_FILE_BYTES = 256 * 1024;
const MAX_FILES_PER_FOLDER = 500;

interface CachedFile {
  mtimeMs: number;
  size: number;
  text: string;
}

export class FileCache {
  private readonly files = new Map<string, CachedFile>();

  /** The file's text (cut at MAX_CAPABILITY_FILE_BYTES), or undefined when it is not a readable file. */
  read(file: string): string | undefined {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(file);
    } catch {
      this.files.delete(file);
      return undefined;
    }
    if (!stat.isFile()) return undefined;
    const cached = this.files.get(file);
    if (cached && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) return cached.text;
    let text: string;
    try {
      // Non-blocking: a FIFO swapped in after the check above must not hang the sidecar.
      const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
      try {
        const buffer = Buffer.alloc(Math.min(stat.size, MAX_CAPABILITY_FILE_BYTES));
        const read = fs.readSync(fd, buffer, 0, buffer.length, 0);
        text = buffer.subarray(0, read).toString("utf8");
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      return undefined;
    }
    this.files.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, text });
    return text;
  }
}

/** Entries of a folder (sorted), or [] when it does not exist. */
export function listDir(dir: string): fs.Dirent[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => !e.name.startsWith("."))
      .sort((a, b) => compareNames(a.name, b.name))
      .slice(0, MAX_FILES_PER_FOLDER);
  } catch {
    return [];
  }
}

/**
 * Files under a folder, as `/`-separated paths relative to it, to a bounded depth. With a
 * `boundary`, a folder it refuses (a link to elsewhere) is not entered; files are listed as
 * they are (the caller reads them through the boundary, and says why one was not read).
 */
export function listFilesRecursive(
  dir: string,
  maxDepth: number,
  accept: (name: string) => boolean = () => true,
  boundary?: ReadBoundary,
): string[] {
  const out: string[] = [];
  const walk = (current: string, prefix: string, depth: number) => {
    for (const entry of listDir(current)) {
      if (out.length >= MAX_FILES_PER_FOLDER) return;
      const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
      const full = path.join(current, entry.name);
      let isDir = entry.isDirectory();
      let isFile = entry.isFile();
      if (entry.isSymbolicLink()) {
        try {
          const stat = fs.statSync(full);
          isDir = stat.isDirectory();
          isFile = stat.isFile();
        } catch {
          continue;
        }
      }
      if (isDir && depth < maxDepth && (!boundary || boundary.allows(full))) walk(full, rel, depth + 1);
      else if (isFile && accept(entry.name)) out.push(rel);
    }
  };
  if (!boundary || boundary.allows(dir)) walk(dir, "", 0);
  return out;
}
