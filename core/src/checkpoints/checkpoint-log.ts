import {
  ALL_TASK_REFS,
  encodeMessage,
  inRefOrder,
  parseRefRecords,
  REF_FORMAT,
  restoredRef,
  SNAPSHOT_HEAD,
  TASK_REF_NAME,
  taskRef,
  taskRefPrefix,
  type CheckpointInfo,
  type CheckpointMeta,
} from "./checkpoint-record.js";
import * as fs from "node:fs";
import * as path from "node:path";
import { commitBody } from "./git-objects.js";
import { CHECKPOINT_IDENTITY, GitError, type ShadowGit } from "./git-process.js";
import { treeOfIndex } from "./index-tree.js";
import { MISSING_REF_OBJECT, refsWithMissingCommits } from "./missing-objects.js";
import { writePack } from "./pack-writer.js";
import { ObjectBatch } from "./tree-editor.js";
import { bothSettled } from "./both-settled.js";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "../storage/index.js";

/**
 * The checkpoints of a shadow repository as commits and refs: one ref per checkpoint under
 * `refs/dline/tasks/<task-id>/`, the newest snapshot of any task at `refs/heads/dline-snapshots`
 * (HEAD), and the "restored" marker of a task at `refs/dline/restored/<task-id>`.
 */
export class CheckpointLog {
  private readonly gitDir: string;
  /** The last HEAD this process wrote, with its tree. */
  private knownHead: { commit: string; tree: string } | undefined;
  /** The last listing of a few tasks (most recent last), by ref, with the checkpoints written since. */
  private readonly listings = new Map<string, Map<string, CheckpointInfo>>();
  /** Checkpoint refs the last listings left out because their commits are missing, with those commits. */
  private readonly missingCommits = new Map<string, string>();

  constructor(private readonly git: ShadowGit) {
    this.gitDir = git.options.gitDir;
  }

  /**
   * The task's checkpoints, oldest first. When its refs (read from the ref files) are none, or
   * the ones of the last listing and of checkpoints written since by this process, the listing
   * is answered without a git process: a commit never changes, so neither does what it records.
   */
  async list(taskId: string, signal?: AbortSignal): Promise<CheckpointInfo[]> {
    const refs = await this.taskRefs(taskId);
    if (refs?.size === 0) return [];
    const known = this.listings.get(taskId);
    if (known && refs && refs.size === known.size && [...refs].every(([ref, id]) => known.get(ref)?.id === id)) {
      return inRefOrder([...known.values()].map((c) => ({ ...c })));
    }
    const listed = await this.records(taskRefPrefix(taskId), signal);
    this.listings.delete(taskId);
    this.listings.set(taskId, new Map(listed.map((c) => [c.ref, { ...c }])));
    // A few tasks' listings are kept (each holds up to 500 left-out entries per checkpoint).
    for (const oldest of this.listings.keys()) {
      if (this.listings.size <= KEPT_LISTINGS) break;
      this.listings.delete(oldest);
    }
    return listed;
  }

  /** A checkpoint this process just wrote joins its task's kept listing. */
  remember(checkpoint: CheckpointInfo): void {
    this.listings.get(checkpoint.task)?.set(checkpoint.ref, { ...checkpoint });
  }

  /**
   * The task's checkpoint refs and their commits, read from the files ref store (loose refs,
   * then packed-refs) without a git process; undefined when that cannot be done safely (a
   * reftable repository, an unexpected entry), and git is asked instead.
   */
  private async taskRefs(taskId: string): Promise<Map<string, string> | undefined> {
    if (!(await this.filesBackend())) return undefined;
    const prefix = taskRefPrefix(taskId);
    const refs = new Map<string, string>();
    const packed = readOrUndefined(path.join(this.gitDir, "packed-refs")) ?? "";
    for (const line of packed.split("\n")) {
      const space = line.indexOf(" ");
      if (line.startsWith("#") || line.startsWith("^") || !line.startsWith(prefix, space + 1)) continue;
      refs.set(line.slice(space + 1), line.slice(0, space));
    }
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(this.gitDir, ...prefix.split("/")), { withFileTypes: true });
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === "ENOENT" ? refs : undefined;
    }
    for (const e of entries) {
      // Files of a ref being written (ours, see addTaskRef, or git's lock files) are not refs yet.
      if (e.name.endsWith(".tmp") || e.name.endsWith(".lock")) continue;
      if (!TASK_REF_NAME.test(e.name) || !e.isFile()) return undefined;
      const id = readOrUndefined(path.join(this.gitDir, ...prefix.split("/"), e.name))?.trim();
      if (!id || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(id)) return undefined;
      refs.set(prefix + e.name, id);
    }
    return refs;
  }

  async listAll(signal?: AbortSignal): Promise<CheckpointInfo[]> {
    return this.records(ALL_TASK_REFS, signal);
  }

  /**
   * The checkpoints under `prefix`. One whose commit is missing (a lost pack) makes git fail the
   * whole listing: then the others are listed, and those refs noted (`unreadable`).
   */
  private async records(prefix: string, signal?: AbortSignal): Promise<CheckpointInfo[]> {
    for (const ref of this.missingCommits.keys()) if (ref.startsWith(prefix)) this.missingCommits.delete(ref);
    try {
      return parseRefRecords(await this.git.text(["for-each-ref", `--format=${REF_FORMAT}`, prefix], { signal }));
    } catch (err) {
      if (!(err instanceof GitError && MISSING_REF_OBJECT.test(err.stderr))) throw err;
    }
    // %(objectname) is the ref's own content: this listing reads no object.
    const refs = (await this.git.text(["for-each-ref", "--format=%(objectname) %(refname)", prefix], { signal }))
      .split("\n")
      .filter(Boolean)
      .map((line) => [line.slice(0, line.indexOf(" ")), line.slice(line.indexOf(" ") + 1)] as const);
    const missing = await refsWithMissingCommits(this.git, refs, signal);
    for (const [id, ref] of refs) if (missing.has(ref)) this.missingCommits.set(ref, id);
    const whole = refs.filter(([, ref]) => !missing.has(ref)).map(([, ref]) => ref);
    if (!whole.length) return [];
    return parseRefRecords(await this.git.text(["for-each-ref", `--format=${REF_FORMAT}`, ...whole], { signal }));
  }

  /** The commits of the task's checkpoints the last listing left out because they are missing. */
  unreadable(taskId: string): ReadonlySet<string> {
    const prefix = taskRefPrefix(taskId);
    return new Set([...this.missingCommits].filter(([ref]) => ref.startsWith(prefix)).map(([, id]) => id));
  }

  /**
   * The tree of the newest snapshot. The commit HEAD points at is read from the ref file; when
   * it is the one this process wrote last, its tree is known without asking git.
   */
  async headTree(signal?: AbortSignal): Promise<string | undefined> {
    const files = await this.filesBackend();
    const head = files ? await this.readRef(SNAPSHOT_HEAD) : undefined;
    if (files && !head) return undefined;
    if (head && this.knownHead?.commit === head) return this.knownHead.tree;
    const out = await this.git.text(["rev-parse", "--verify", "-q", `${SNAPSHOT_HEAD}^{tree}`], {
      okCodes: [1],
      signal,
    });
    return out.trim() || undefined;
  }

  /** Remembers the commit and tree HEAD was just moved to (by us, under the lock). */
  noteHead(commit: string, tree: string): void {
    this.knownHead = { commit, tree };
  }

  /** HEAD's tree when `commit` is the HEAD this process last noted. */
  knownTreeOf(commit: string): string | undefined {
    return this.knownHead?.commit === commit ? this.knownHead.tree : undefined;
  }

  /**
   * Commits the index (or `tree` when given: checkpoints without a new snapshot) as a
   * checkpoint of `meta.task`, moves HEAD to it and clears the task's restored marker. HEAD
   * only serves as the base `git status` compares the index with.
   */
  async commit(
    meta: Omit<CheckpointMeta, "reused">,
    options: { tree?: string; signal?: AbortSignal; packInto?: string } = {},
  ): Promise<CheckpointInfo> {
    const { signal } = options;
    if (options.packInto && !options.tree) return this.commitPacked(meta, options.packInto, signal);
    const [written, previous] = await bothSettled(
      options.tree ? Promise.resolve(options.tree) : this.git.text(["write-tree"], { signal }).then((t) => t.trim()),
      this.headTree(signal),
    );
    const tree = written || (await this.emptyTree(signal));
    const full: CheckpointMeta = { ...meta, reused: !options.tree && previous === tree };
    // Parentless on purpose: each checkpoint keeps only its own snapshot alive, so deleting the
    // refs of a task (or its oldest checkpoints, for the size budget) lets gc free them.
    const commit = (
      await this.git.text(["commit-tree", tree, "-F", "-"], { input: encodeMessage(full), signal })
    ).trim();
    return this.finishCommit(full, commit, tree, signal);
  }

  /**
   * The index's trees and the commit built in this process and written as one pack into
   * `objectsDir` (index-tree.ts): for saves that staged a whole workspace, where write-tree
   * would create thousands of loose tree files.
   */
  private async commitPacked(
    meta: Omit<CheckpointMeta, "reused">,
    objectsDir: string,
    signal?: AbortSignal,
  ): Promise<CheckpointInfo> {
    const batch = new ObjectBatch();
    const [tree, previous] = await Promise.all([treeOfIndex(this.git, batch, signal), this.headTree(signal)]);
    const full: CheckpointMeta = { ...meta, reused: previous === tree };
    const commit = batch.put("commit", commitBody(tree, CHECKPOINT_IDENTITY, full.createdAt, encodeMessage(full)));
    await writePack(objectsDir, batch.objects);
    return this.finishCommit(full, commit, tree, signal);
  }

  /** Objects are written: the checkpoint's ref, then HEAD (a crash leaves no ref to a missing object). */
  private async finishCommit(
    full: CheckpointMeta,
    commit: string,
    tree: string,
    signal?: AbortSignal,
  ): Promise<CheckpointInfo> {
    const ref = await this.addTaskRef(full.task, full.createdAt, commit, signal);
    await this.clearRestoredMarker(full.task, signal);
    await this.writeLooseRef(SNAPSHOT_HEAD, commit, signal);
    this.noteHead(commit, tree);
    const checkpoint = { ...full, id: commit, tree, seq: 0, ref };
    this.remember(checkpoint);
    return checkpoint;
  }

  /**
   * Creates the checkpoint's ref. With the files ref backend the loose ref is written directly
   * (atomic rename, then a hard link that fails if the name is taken); callers hold the
   * repository lock, so no git process races it. This saves one git process per checkpoint.
   */
  async addTaskRef(taskId: string, timeMs: number, commit: string, signal?: AbortSignal): Promise<string> {
    for (let tie = 0; tie < 1000; tie++) {
      const ref = taskRef(taskId, timeMs, tie);
      if (!(await this.filesBackend())) {
        try {
          await this.git.command(["update-ref", ref, commit, ""], { signal });
          return ref;
        } catch (err) {
          if (err instanceof GitError && /exists/i.test(err.stderr)) continue;
          throw err;
        }
      }
      const file = path.join(this.gitDir, ...ref.split("/"));
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, `${commit}\n`, { mode: PRIVATE_FILE_MODE });
      try {
        fs.linkSync(tmp, file);
        return ref;
      } catch (err) {
        // Another checkpoint of this task in the same millisecond: take the next name.
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      } finally {
        fs.rmSync(tmp, { force: true });
      }
    }
    throw new Error("no free checkpoint ref name");
  }

  /** Points `ref` at `commit` (callers hold the repository lock). */
  async setRef(ref: string, commit: string): Promise<void> {
    await this.writeLooseRef(ref, commit);
  }

  /** The commit a ref points at, whatever the ref store; undefined when there is no such ref. */
  async resolveRef(ref: string, signal?: AbortSignal): Promise<string | undefined> {
    if (await this.filesBackend()) return this.readRef(ref);
    return (await this.git.text(["rev-parse", "--verify", "-q", ref], { okCodes: [1], signal })).trim() || undefined;
  }

  private async writeLooseRef(ref: string, commit: string, signal?: AbortSignal): Promise<void> {
    if (!(await this.filesBackend())) {
      await this.git.command(["update-ref", ref, commit], { signal });
      return;
    }
    const file = path.join(this.gitDir, ...ref.split("/"));
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${commit}\n`, { mode: PRIVATE_FILE_MODE });
    fs.renameSync(tmp, file);
  }

  /** A ref name for a new checkpoint of `taskId` that no checkpoint uses yet (callers hold the lock). */
  async freeTaskRef(taskId: string, timeMs: number): Promise<string> {
    for (let tie = 0; ; tie++) {
      const ref = taskRef(taskId, timeMs, tie);
      const taken = fs.existsSync(path.join(this.gitDir, ...ref.split("/")));
      if (!taken) return ref;
    }
  }

  /**
   * The commit a ref points at, read from the files ref store (loose file, then packed-refs)
   * without a git process; undefined when absent or when the repository uses reftable.
   */
  async readRef(ref: string): Promise<string | undefined> {
    if (!(await this.filesBackend())) return undefined;
    const loose = readOrUndefined(path.join(this.gitDir, ...ref.split("/")));
    if (loose !== undefined) {
      const id = loose.trim();
      return /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(id) ? id : undefined;
    }
    const packed = readOrUndefined(path.join(this.gitDir, "packed-refs")) ?? "";
    const line = packed.split("\n").find((l) => l.endsWith(` ${ref}`));
    return line?.slice(0, line.indexOf(" ")) || undefined;
  }

  /**
   * The restored marker goes with the next checkpoint. A loose marker is removed directly
   * (callers hold the repository lock, so no git process races it); git is asked only when
   * the marker is packed or the ref store is not the files one.
   */
  async clearRestoredMarker(taskId: string, signal?: AbortSignal): Promise<void> {
    const ref = restoredRef(taskId);
    const files = await this.filesBackend();
    const packed = (readOrUndefined(path.join(this.gitDir, "packed-refs")) ?? "").includes(` ${ref}\n`);
    if (files && !packed) {
      fs.rmSync(path.join(this.gitDir, ...ref.split("/")), { force: true });
      return;
    }
    await this.git.command(["update-ref", "-d", ref], { signal });
  }

  private backend: Promise<boolean> | undefined;
  /** True for the classic files ref store (a reftable repository is always written through git). */
  private filesBackend(): Promise<boolean> {
    return (this.backend ??= Promise.resolve(!fs.existsSync(path.join(this.gitDir, "reftable"))));
  }

  async emptyTree(signal?: AbortSignal): Promise<string> {
    return (await this.git.text(["hash-object", "-t", "tree", "-w", "--stdin"], { input: "", signal })).trim();
  }

  async restoredMarker(taskId: string, signal?: AbortSignal): Promise<string | undefined> {
    return this.resolveRef(restoredRef(taskId), signal);
  }

  async setRestoredMarker(taskId: string, commit: string, signal?: AbortSignal): Promise<void> {
    await this.writeLooseRef(restoredRef(taskId), commit, signal);
  }

  async moveHead(commit: string, tree: string, signal?: AbortSignal): Promise<void> {
    await this.writeLooseRef(SNAPSHOT_HEAD, commit, signal);
    this.noteHead(commit, tree);
  }

  /** Deletes refs (checkpoints of deleted or pruned tasks); their objects become prunable. */
  async deleteRefs(refs: string[], signal?: AbortSignal): Promise<void> {
    if (!refs.length) return;
    await this.git.run(["update-ref", "--stdin"], { input: refs.map((r) => `delete ${r}`).join("\n") + "\n", signal });
  }

  async taskIds(signal?: AbortSignal): Promise<string[]> {
    const out = await this.git.text(["for-each-ref", "--format=%(refname)", ALL_TASK_REFS], { signal });
    const ids = new Set<string>();
    for (const line of out.split("\n")) {
      const rest = line.slice(ALL_TASK_REFS.length);
      const id = rest.slice(0, rest.indexOf("/"));
      if (id) ids.add(id);
    }
    return [...ids];
  }
}

const KEPT_LISTINGS = 8;

/**
 * Ref files are a few bytes, read and written under the repository lock on every checkpoint:
 * synchronous calls take microseconds where each asynchronous one is a thread-pool round trip.
 */
function readOrUndefined(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
