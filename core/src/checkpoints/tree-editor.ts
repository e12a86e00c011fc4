import {
  commitTree,
  objectId,
  parseTree,
  serializeTree,
  TREE_MODE,
  type ObjectType,
  type TreeItem,
} from "./git-objects.js";
import type { ObjectReader } from "./loose-objects.js";
import type { NewObject } from "./pack-writer.js";
import type { PathChange } from "./fast-commit.js";

/** A tree (or commit) this editor cannot read: missing, damaged, or in a form only git reads. The caller uses git. */
export class TreeUnavailable extends Error {
  constructor(readonly id: string) {
    super(`object ${id} is not readable without git`);
  }
}

/** The edits under one folder: files to set or delete here, and edits of subfolders. */
interface FolderEdits {
  files: Map<string, PathChange>;
  folders: Map<string, FolderEdits>;
}

/** New objects, by id, to be written together (one pack). */
export class ObjectBatch {
  readonly objects = new Map<string, NewObject>();

  put(type: ObjectType, body: Buffer): string {
    const id = objectId(type, body);
    this.objects.set(id, { type, body });
    return id;
  }
}

/**
 * Applies path changes to a snapshot's tree by rewriting only the trees along the changed
 * paths, into an ObjectBatch, without a git process. Trees come from memory (a turn's base is
 * usually the tree the previous turn built) or from the repository's loose objects and packs
 * (a later process's first turn); up to `cacheEntries` trees are remembered.
 */
export class TreeEditor {
  /** Parsed entries by tree id (never modified: edits copy them). */
  private readonly trees = new Map<string, readonly TreeItem[]>();

  constructor(
    private readonly objects: ObjectReader,
    private readonly cacheEntries = 4096,
  ) {}

  /** The tree a commit names. */
  treeOfCommit(commit: string): string {
    const object = this.objects.read(commit);
    const tree = object?.type === "commit" ? commitTree(object.body) : undefined;
    if (!tree) throw new TreeUnavailable(commit);
    return tree;
  }

  /** The root tree after `changes`, its new objects put in `batch`; throws TreeUnavailable when a tree on the way cannot be read. */
  apply(baseTree: string, changes: readonly PathChange[], batch: ObjectBatch): string {
    const root: FolderEdits = { files: new Map(), folders: new Map() };
    for (const change of changes) {
      const folders = change.path.split("/");
      const name = folders.pop()!; // split gives at least one part
      let folder = root;
      for (const part of folders) {
        let next = folder.folders.get(part);
        if (!next) folder.folders.set(part, (next = { files: new Map(), folders: new Map() }));
        folder = next;
      }
      folder.files.set(name, change);
    }
    return this.edit(baseTree, root, batch) ?? this.putTree([], batch);
  }

  /**
   * Mode and id of the file at `repoPath` in a tree, undefined when absent (or a folder); throws
   * TreeUnavailable when a tree on the way is neither remembered nor readable.
   */
  entryAt(treeId: string, repoPath: string): { mode: string; id: string } | undefined {
    const folders = repoPath.split("/");
    const fileName = folders.pop()!; // split gives at least one part
    let tree = treeId;
    for (const folderName of folders) {
      const item = this.itemNamed(tree, folderName);
      if (item?.mode !== TREE_MODE) return undefined;
      tree = item.id;
    }
    const item = this.itemNamed(tree, fileName);
    return item && item.mode !== TREE_MODE ? { mode: item.mode, id: item.id } : undefined;
  }

  private itemNamed(treeId: string, name: string): TreeItem | undefined {
    const bytes = Buffer.from(name, "utf8");
    return this.readTree(treeId).find((t) => t.name.equals(bytes));
  }

  /** Writes one folder's new tree; undefined when it ends up empty (git stores no empty folders). */
  private edit(treeId: string | undefined, edits: FolderEdits, batch: ObjectBatch): string | undefined {
    const items = new Map<string, TreeItem>();
    for (const item of treeId ? this.readTree(treeId) : []) items.set(item.name.toString("latin1"), item);
    const key = (name: string) => Buffer.from(name, "utf8").toString("latin1");
    for (const [name, sub] of edits.folders) {
      const existing = items.get(key(name));
      // A submodule entry is left to git, which knows what to do with it.
      if (existing?.mode === "160000") throw new TreeUnavailable(existing.id);
      const id = this.edit(existing?.mode === TREE_MODE ? existing.id : undefined, sub, batch);
      if (id) items.set(key(name), { mode: TREE_MODE, name: Buffer.from(name, "utf8"), id });
      else if (existing?.mode === TREE_MODE) items.delete(key(name));
    }
    for (const [name, change] of edits.files) {
      if (change.mode === "delete") {
        // As fast-import's `D`: a folder at that path goes with everything in it.
        items.delete(key(name));
        continue;
      }
      const id = batch.put("blob", change.content ?? Buffer.alloc(0));
      items.set(key(name), { mode: change.mode, name: Buffer.from(name, "utf8"), id });
    }
    if (items.size === 0) return undefined;
    return this.putTree([...items.values()], batch);
  }

  /** A tree's entries, remembered or read; throws TreeUnavailable when it cannot be read so. */
  readTree(id: string): readonly TreeItem[] {
    let items = this.trees.get(id);
    if (!items) {
      const object = this.objects.read(id);
      if (object?.type !== "tree") throw new TreeUnavailable(id);
      items = parseTree(object.body);
      this.remember(id, items);
    }
    return items;
  }

  private putTree(items: TreeItem[], batch: ObjectBatch): string {
    const id = batch.put("tree", serializeTree(items));
    this.remember(id, items);
    return id;
  }

  private remember(id: string, items: readonly TreeItem[]): void {
    this.trees.delete(id);
    this.trees.set(id, items);
    if (this.trees.size > this.cacheEntries) this.trees.delete(this.trees.keys().next().value as string);
  }
}
