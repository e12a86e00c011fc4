import * as fs from "node:fs";
import * as path from "node:path";
import { PRIVATE_DIR_MODE, writeFileAtomicSync } from "../storage/index.js";

/**
 * The built-in exclusions of workspace scans (docs/checkpoints.md, "What a snapshot
 * holds"), written into the shadow repository's `info/exclude` with Git LFS patterns of the
 * project's root `.gitattributes`. The project's own `.gitignore` files apply by themselves
 * because the shadow repository's work tree is the project folder.
 *
 * Two kinds. Folders and names that may be folders as well as files (a `.env` virtualenv, an
 * exploded `app.war`, a `src.bak` copy, an ESRI `.gdb` folder, caches and temporaries):
 */
const FOLDER_OR_FILE_EXCLUDES: readonly string[] = [
  // version control
  ".git/",
  // build and dependency folders
  "node_modules/",
  "dist/",
  "build/",
  "out/",
  "bin/",
  "obj/",
  "vendor/",
  "venv/",
  ".venv/",
  "coverage/",
  ".vscode/",
  ".idea/",
  "__pycache__/",
  "target/",
  ".gradle/",
  ".next/",
  ".nuxt/",
  "bower_components/",
  "jspm_packages/",
  "Pods/",
  "DerivedData/",
  ".cache/",
  ".pytest_cache/",
  ".mypy_cache/",
  ".tox/",
  ".terraform/",
  // caches, logs and temporaries
  "*.log",
  "*.lock",
  "*.tmp",
  "*.temp",
  "*.cache",
  // environment files (and virtualenvs named after them)
  "*.env*",
  ".env*",
  "*.local",
  // archives that may be unpacked folders, macOS packages
  "*.jar",
  "*.war",
  "*.pkg",
  // databases and their dumps and copies
  "*.db",
  "*.dump",
  "*.bak",
  // an ESRI file geodatabase is a folder
  "*.gdb",
];

/**
 * ...and kinds of files (images, media, binaries, data files): a folder of such a name is no
 * such file, and its files are scanned like any other's. git checks every folder of a scan
 * against the exclusions (13,600 folders at 27,000 files); the negated pattern that matches any
 * folder, written after these (`writeExcludeFile`), ends that check for a folder before it
 * reaches them (a later task's `git status` at 27,000 files: 73 against 82 ms of CPU).
 */
const FILE_TYPE_EXCLUDES: readonly string[] = [
  // images, audio, video
  "*.png",
  "*.jpg",
  "*.jpeg",
  "*.gif",
  "*.bmp",
  "*.ico",
  "*.webp",
  "*.tif",
  "*.tiff",
  "*.psd",
  "*.heic",
  "*.raw",
  "*.mp4",
  "*.mov",
  "*.avi",
  "*.mkv",
  "*.wmv",
  "*.flv",
  "*.webm",
  "*.mp3",
  "*.wav",
  "*.ogg",
  "*.flac",
  "*.aac",
  "*.m4a",
  // editors' swap files, pid files
  "*.swp",
  "*.swo",
  "*.pid",
  ".DS_Store",
  // a restore's copy being written (left behind when its process was killed mid-write)
  "*.dline-restore-*",
  // archives and binaries
  "*.zip",
  "*.tar",
  "*.gz",
  "*.tgz",
  "*.bz2",
  "*.xz",
  "*.7z",
  "*.rar",
  "*.exe",
  "*.dll",
  "*.so",
  "*.dylib",
  "*.o",
  "*.a",
  "*.lib",
  "*.class",
  "*.pyc",
  "*.pyo",
  "*.wasm",
  "*.bin",
  "*.iso",
  "*.dmg",
  "*.deb",
  "*.rpm",
  "*.msi",
  // database files
  "*.sqlite",
  "*.sqlite3",
  "*.mdb",
  "*.accdb",
  "*.db-journal",
  "*.db-wal",
  "*.db-shm",
  // geospatial data
  "*.csv",
  "*.shp",
  "*.shx",
  "*.dbf",
  "*.prj",
  "*.geojson",
  "*.kml",
  "*.kmz",
  "*.gpx",
  "*.gpkg",
  "*.tab",
  "*.mif",
  "*.las",
  "*.laz",
  "*.nc",
  "*.hdf",
  "*.tif.aux.xml",
];

/** Every built-in exclusion. */
export const BUILT_IN_EXCLUDES: readonly string[] = [...FOLDER_OR_FILE_EXCLUDES, ...FILE_TYPE_EXCLUDES];

export type SkipReason = "size" | "excluded_type" | "ignored" | "lfs" | "nested_repository" | "name_not_utf8";

export interface SkippedPath {
  path: string;
  reason: SkipReason;
}

const LFS_MARKER = "# dline: lfs patterns";

/**
 * Patterns marked `filter=lfs` in the project's root `.gitattributes`. Synchronous, as every
 * step before a scan's `git status` starts: each asynchronous one waits for the event loop,
 * which a task's first model request keeps busy meanwhile.
 */
export function readLfsPatterns(workspaceRoot: string): string[] {
  let text: string;
  try {
    const file = path.join(workspaceRoot, ".gitattributes");
    // A regular file only: reading a FIFO of that name would wait for good.
    if (!fs.statSync(file).isFile()) return [];
    text = fs.readFileSync(file, "utf8");
  } catch {
    return [];
  }
  const patterns: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith("#")) continue;
    const [pattern, ...attrs] = trimmed.split(/\s+/);
    if (pattern && attrs.includes("filter=lfs")) patterns.push(pattern);
  }
  return patterns;
}

/**
 * The built-in part of `info/exclude`, before the LFS section. git reads the patterns last to
 * first and the first match decides: a folder meets the folder-or-file patterns, then the
 * negated any-folder pattern (not excluded by what follows), never the file types.
 */
const BUILT_IN_SECTION: readonly string[] = [
  "# dline: built-in checkpoint exclusions",
  ...FILE_TYPE_EXCLUDES,
  "# dline: a folder is none of the file types above",
  "!*/",
  ...FOLDER_OR_FILE_EXCLUDES,
];

/** Writes `info/exclude`: built-in patterns first, then the LFS section (synchronously: a few hundred bytes). */
export function writeExcludeFile(gitDir: string, lfsPatterns: string[]): void {
  const body = [...BUILT_IN_SECTION, LFS_MARKER, ...lfsPatterns, ""].join("\n");
  const file = path.join(gitDir, "info", "exclude");
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
  let current = "";
  try {
    current = fs.readFileSync(file, "utf8");
  } catch {
    // first write
  }
  if (current !== body) {
    writeFileAtomicSync(file, body);
  }
}

/**
 * Maps one `git check-ignore -v` source (file:line) to why a path was left out: lines of our
 * `info/exclude` before the LFS marker are built-in exclusions, after it LFS; any other source
 * is the project's own ignore files.
 */
export function reasonOfIgnoreSource(source: string, lineNo: number): SkipReason {
  if (source.endsWith("info/exclude")) {
    const markerLine = BUILT_IN_SECTION.length + 1;
    return lineNo > markerLine ? "lfs" : "excluded_type";
  }
  return "ignored";
}

/** One entry per path (the first reason given wins). */
export function dedupeSkips(skips: SkippedPath[]): SkippedPath[] {
  const seen = new Map<string, SkippedPath>();
  for (const s of skips) if (!seen.has(s.path)) seen.set(s.path, s);
  return [...seen.values()];
}
