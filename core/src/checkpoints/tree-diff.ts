import { TREE_MODE, type TreeItem } from "./git-objects.js";

/**
 * The paths (files, links, submodules) whose entries differ between two trees, as `git diff-tree
 * -r --name-only` names them: a folder on one side and a file on the other gives the file and
 * every path below the folder. Trees come from `itemsOf` (it throws when one cannot be read);
 * a subtree with the same id on both sides is not read.
 */
export function changedPaths(
  itemsOf: (treeId: string) => readonly TreeItem[],
  before: string,
  after: string,
): string[] {
  const changed: string[] = [];
  walk(itemsOf, before, after, "", changed);
  return changed;
}

function walk(
  itemsOf: (treeId: string) => readonly TreeItem[],
  before: string | undefined,
  after: string | undefined,
  prefix: string,
  changed: string[],
): void {
  if (before === after) return;
  const old = byName(before ? itemsOf(before) : []);
  const now = byName(after ? itemsOf(after) : []);
  for (const name of new Set([...old.keys(), ...now.keys()])) {
    const a = old.get(name);
    const b = now.get(name);
    if (a && b && a.id === b.id && a.mode === b.mode) continue;
    const rel = prefix + Buffer.from(name, "latin1").toString("utf8");
    const folderA = a?.mode === TREE_MODE ? a.id : undefined;
    const folderB = b?.mode === TREE_MODE ? b.id : undefined;
    if (folderA || folderB) walk(itemsOf, folderA, folderB, `${rel}/`, changed);
    // The file side of a folder replaced by a file (or the other way round), or a file changed.
    if ((a && !folderA) || (b && !folderB)) changed.push(rel);
  }
}

/** A tree's entries by name (its bytes as latin1: names need not be UTF-8). */
function byName(items: readonly TreeItem[]): Map<string, TreeItem> {
  return new Map(items.map((item) => [item.name.toString("latin1"), item]));
}
