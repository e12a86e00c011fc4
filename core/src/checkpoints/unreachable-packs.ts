import * as fs from "node:fs";
import * as path from "node:path";
import type { ShadowGit } from "./git-process.js";

const IDX_MAGIC = 0xff744f63;
/** What git keeps beside a pack; all of it goes with the pack. */
const PACK_COMPANIONS = [".pack", ".rev", ".bitmap", ".mtimes"];

/**
 * Removes the packs of which no object is reachable any more (from a ref, HEAD or the index),
 * without writing anything: mostly the packs a deleted task's turn saves wrote (one each). On a
 * full disk this is the room a deletion gives back, where `git gc` fails: it first writes a new
 * pack of everything kept. A pack git was told to keep (`.keep`, `.promisor`), a repository with
 * a multi-pack index (which names its packs) and an index this does not read are left to gc.
 * Callers hold the repository lock, so no save writes a pack meanwhile; a pack is self-contained
 * (its deltas' bases are in it), so no other pack needs it. Answers the bytes freed.
 */
export async function removeUnreachablePacks(git: ShadowGit, objectsDir: string): Promise<number> {
  const packDir = path.join(objectsDir, "pack");
  let names: string[];
  try {
    names = fs.readdirSync(packDir);
  } catch {
    return 0;
  }
  if (names.includes("multi-pack-index")) return 0;
  const present = new Set(names);
  const candidates = names
    .filter((n) => /^pack-[0-9a-f]{40}\.idx$/.test(n))
    .map((n) => n.slice(0, -".idx".length))
    .filter((base) => !present.has(`${base}.keep`) && !present.has(`${base}.promisor`));
  if (!candidates.length) return 0;
  const reachable = await reachableObjects(git);
  let freed = 0;
  for (const base of candidates) {
    const ids = packedIds(path.join(packDir, `${base}.idx`));
    if (!ids || ids.some((id) => reachable.has(id))) continue;
    freed += removePack(packDir, base);
  }
  return freed;
}

/** Every object reachable from a ref, HEAD, a reflog or the index (what `git gc` keeps). */
export async function reachableObjects(git: ShadowGit): Promise<Set<string>> {
  const out = await git.text(["rev-list", "--objects", "--all", "--reflog", "--indexed-objects", "--no-object-names"]);
  return new Set(out.split("\n").filter(Boolean));
}

/** Removes a pack (`base`: `pack-<sum>`) and what git keeps beside it; answers the bytes freed. */
export function removePack(packDir: string, base: string): number {
  let freed = 0;
  // The index first: git finds a pack by it, so the pack is never seen without it.
  for (const suffix of [".idx", ...PACK_COMPANIONS]) {
    const file = path.join(packDir, base + suffix);
    try {
      const size = fs.statSync(file).size;
      fs.unlinkSync(file);
      freed += size;
    } catch {
      // not there (a companion git did not write)
    }
  }
  return freed;
}

/** The object ids a version-2 pack index lists; undefined for anything else. */
export function packedIds(idxFile: string): string[] | undefined {
  let idx: Buffer;
  try {
    idx = fs.readFileSync(idxFile);
  } catch {
    return undefined;
  }
  if (idx.length < 8 + 1024 || idx.readUInt32BE(0) !== IDX_MAGIC || idx.readUInt32BE(4) !== 2) return undefined;
  const count = idx.readUInt32BE(8 + 255 * 4);
  const start = 8 + 1024;
  if (idx.length < start + count * 20) return undefined;
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(idx.toString("hex", start + i * 20, start + (i + 1) * 20));
  return ids;
}
