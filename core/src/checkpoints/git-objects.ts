import { createHash } from "node:crypto";

/**
 * Git's object formats for the three kinds a checkpoint writes: blobs, trees (entries sorted
 * the way git sorts them) and parentless commits. Pure functions: reading and writing the
 * files is LooseObjects' job.
 */
export type ObjectType = "blob" | "tree" | "commit";

export interface TreeItem {
  /** As stored in a tree: "100644", "100755", "120000", "160000" or "40000" (a folder). */
  mode: string;
  /** The name's bytes as stored (names are not always valid UTF-8). */
  name: Buffer;
  id: string;
}

export const TREE_MODE = "40000";

export function objectId(type: ObjectType, body: Buffer): string {
  return createHash("sha1").update(`${type} ${body.length}\0`).update(body).digest("hex");
}

/** Entries of a tree object's body; throws on a malformed one. */
export function parseTree(body: Buffer): TreeItem[] {
  const items: TreeItem[] = [];
  let pos = 0;
  while (pos < body.length) {
    const space = body.indexOf(0x20, pos);
    const nul = space < 0 ? -1 : body.indexOf(0, space);
    if (nul < 0 || nul + 21 > body.length) throw new Error("malformed tree object");
    items.push({
      mode: body.toString("latin1", pos, space),
      name: Buffer.from(body.subarray(space + 1, nul)),
      id: body.toString("hex", nul + 1, nul + 21),
    });
    pos = nul + 21;
  }
  return items;
}

/** A tree object's body; entries in git's order (a folder sorts as if its name ended in "/"). */
export function serializeTree(items: readonly TreeItem[]): Buffer {
  const sorted = [...items].sort(compareTreeItems);
  let size = 0;
  for (const item of sorted) size += item.mode.length + item.name.length + 22;
  // One buffer written in place: a save serializes the trees along its paths, hundreds of
  // entries each, and a baseline thousands of trees.
  const body = Buffer.allocUnsafe(size);
  let pos = 0;
  for (const item of sorted) {
    pos += body.write(item.mode, pos, "latin1");
    body[pos++] = 0x20;
    pos += item.name.copy(body, pos);
    body[pos++] = 0;
    if (body.write(item.id, pos, "hex") !== 20) throw new Error(`not an object id: ${item.id}`);
    pos += 20;
  }
  return body;
}

/** Git's order of tree entries: by name bytes, a folder's name as if it ended in "/". */
function compareTreeItems(a: TreeItem, b: TreeItem): number {
  const shorter = Math.min(a.name.length, b.name.length);
  for (let i = 0; i < shorter; i++) {
    const d = a.name[i]! - b.name[i]!;
    if (d) return d;
  }
  return nextByte(a, shorter) - nextByte(b, shorter);
}

function nextByte(item: TreeItem, at: number): number {
  if (at < item.name.length) return item.name[at]!;
  return item.mode === TREE_MODE ? 0x2f : 0;
}

/** A parentless commit's body, author and committer alike (as fast-import writes it). */
export function commitBody(
  tree: string,
  identity: { name: string; email: string },
  timeMs: number,
  message: string,
): Buffer {
  const who = `${identity.name} <${identity.email}> ${Math.floor(timeMs / 1000)} +0000`;
  return Buffer.from(`tree ${tree}\nauthor ${who}\ncommitter ${who}\n\n${message}`, "utf8");
}

/** The tree id a commit body names, if it is a commit. */
export function commitTree(body: Buffer): string | undefined {
  const match = /^tree ([0-9a-f]{40})\n/.exec(body.subarray(0, 46).toString("latin1"));
  return match?.[1];
}
