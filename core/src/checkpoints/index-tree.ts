import { serializeTree, TREE_MODE, type TreeItem } from "./git-objects.js";
import { GitError, type ShadowGit } from "./git-process.js";
import type { ObjectBatch } from "./tree-editor.js";

interface Folder {
  files: TreeItem[];
  folders: Map<string, Folder>;
}

/**
 * The trees of the whole index, built in this process into `batch` (written as one pack by the
 * caller), for a save that staged a whole workspace (a baseline). `git write-tree` would write
 * each of them as a loose object file: 12,000 files for babel's 13,000 folders, seconds on a
 * busy disk. The index's cache-tree is not updated: the next `write-tree` computes the trees
 * again (CPU only; they exist then) and records it. Answers the root tree's id.
 */
export async function treeOfIndex(git: ShadowGit, batch: ObjectBatch, signal?: AbortSignal): Promise<string> {
  const root: Folder = { files: [], folders: new Map() };
  // Bytes, not text: file names need not be valid UTF-8, and trees must name them exactly.
  const out = (await git.run(["ls-files", "-s", "-z"], { signal })).stdout;
  for (let pos = 0; pos < out.length;) {
    const end = out.indexOf(0, pos);
    const tab = out.indexOf(9, pos);
    // "<mode> <id> <stage>\t<path>"
    const [mode, id] = out.toString("latin1", pos, tab).split(" ");
    if (mode === undefined || id === undefined)
      throw new GitError("unexpected output of git ls-files", ["ls-files"], `at byte ${pos}`, 1);
    let folder = root;
    let start = tab + 1;
    for (let slash = out.indexOf(0x2f, start); slash >= 0 && slash < end; slash = out.indexOf(0x2f, start)) {
      const key = out.toString("latin1", start, slash);
      let next = folder.folders.get(key);
      if (!next) folder.folders.set(key, (next = { files: [], folders: new Map() }));
      folder = next;
      start = slash + 1;
    }
    folder.files.push({ mode, name: Buffer.from(out.subarray(start, end)), id });
    pos = end + 1;
  }
  const write = (folder: Folder): string => {
    const items = [...folder.files];
    for (const [key, sub] of folder.folders)
      items.push({ mode: TREE_MODE, name: Buffer.from(key, "latin1"), id: write(sub) });
    return batch.put("tree", serializeTree(items));
  };
  return write(root);
}
