import { readFileSync } from "node:fs";
import * as path from "node:path";
import { writeFileAtomicSync } from "../storage/index.js";

/**
 * The shadow repository's `info/attributes`, which takes precedence over every `.gitattributes`
 * of the workspace: snapshots store and restore file bytes exactly as they are, whatever the
 * workspace says about line endings (`text`, `eol`, `crlf`), filters (LFS included: LFS files
 * are left out by the exclusions instead), `ident` or `working-tree-encoding`, and no diff or
 * merge driver the workspace names is looked up. Without conversions, git also streams a
 * baseline's files straight into packs (bulk check-in), which conversions prevent.
 */
export const ATTRIBUTES = [
  "# dline: snapshots keep file bytes exactly as they are",
  "* -text -eol -crlf -filter -ident -working-tree-encoding -diff -merge -export-subst",
  "",
].join("\n");

/** Writes `info/attributes` when it is missing or differs (synchronous: a few bytes, on every open). */
export function writeAttributesFile(gitDir: string): void {
  const file = path.join(gitDir, "info", "attributes");
  let current: string | undefined;
  try {
    current = readFileSync(file, "utf8");
  } catch {
    // first write
  }
  if (current === ATTRIBUTES) return;
  writeFileAtomicSync(file, ATTRIBUTES);
}
