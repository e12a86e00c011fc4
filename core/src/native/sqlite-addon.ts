import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import * as sea from "node:sea";
import { gunzipSync } from "node:zlib";
import { writeFileAtomicSync } from "../storage/index.js";

/** The addon's file name in the cache folder. */
export const SQLITE_ADDON_FILE = "better_sqlite3.node";
/** The SEA asset that carries better-sqlite3's compiled addon, gzipped (scripts/build-sidecar.mjs). */
export const SQLITE_ADDON_ASSET = "better_sqlite3.node.gz";

/**
 * Writes `bytes` to `target` unless it is already there, atomically. Two sidecars starting at
 * once on a cold cache both write their own temp file and both renames succeed (same content),
 * so neither sees a half file.
 */
function writeFileOnceAtomic(target: string, bytes: Uint8Array): void {
  if (fs.existsSync(target) && fs.statSync(target).size === bytes.byteLength) return;
  writeFileAtomicSync(target, bytes, { mode: 0o700 });
}

/**
 * The native binding for better-sqlite3. Inside the single executable, `require` only loads
 * built-ins, so the addon is read from the SEA asset, unzipped and extracted once per content
 * hash under `addonDirFor(hash)`, and loaded with process.dlopen. Outside a SEA (tests running
 * the sources) it returns undefined and better-sqlite3 finds its addon in node_modules.
 */
export function loadSqliteBinding(
  addonDirFor: (contentHash: string) => string,
  /** The asset's hash computed at build time; saves hashing the addon at every start. */
  knownHash?: string,
): object | undefined {
  if (!sea.isSea()) return undefined;
  let file = knownHash ? path.join(addonDirFor(knownHash), SQLITE_ADDON_FILE) : undefined;
  if (!file || !fs.existsSync(file)) {
    const bytes = gunzipSync(new Uint8Array(sea.getRawAsset(SQLITE_ADDON_ASSET) as ArrayBuffer));
    const hash = createHash("sha256").update(bytes).digest("hex").slice(0, 24);
    if (knownHash && hash !== knownHash)
      throw new Error(`The embedded SQLite addon is damaged (hash ${hash}, built as ${knownHash}).`);
    file = path.join(addonDirFor(hash), SQLITE_ADDON_FILE);
    writeFileOnceAtomic(file, bytes);
  }
  const module = { exports: {} as object };
  process.dlopen(module, file);
  return module.exports;
}
