import { GitError, type GitProcess, type ShadowGit } from "./git-process.js";

/**
 * One `git fast-import` process talked to while it runs: `ls` and `cat-blob` answer on its
 * stdout in the order they were asked, so a checkpoint (read the previous snapshot's tree and
 * the entries of the edited paths, then write the commit) or a whole file restore (undo
 * checkpoint, target entries and blobs, the new snapshot) costs one git process instead of
 * one per step. Nothing reads or writes the 20,000- or 100,000-entry index.
 *
 * Objects and refs become visible to other git processes at `checkpoint()` or `finish()`;
 * a session ended any other way (error, `abort()`, the process killed) writes no ref.
 */
export interface TreeEntry {
  mode: string;
  id: string;
}

export interface CommitChange {
  path: string;
  /** "delete" removes the path. */
  mode: string;
  /** A stored blob (restores)... */
  id?: string;
  /** ...or new content (saves). */
  content?: Buffer;
}

export interface SessionCommit {
  ref: string;
  mark: number;
  message: string;
  timeMs: number;
  identity: { name: string; email: string };
  /** The tree the changes apply to (a full tree id). */
  baseTree: string;
  changes: CommitChange[];
}

type Reader = {
  /** Consumes one answer from `buf` at `pos`; returns the position after it, or -1 when incomplete. */
  take: (buf: Buffer, pos: number) => number;
  reject: (err: Error) => void;
};

/** fast-import path syntax: C-style quoted when it starts with a quote or holds a newline. */
export function quotePath(p: string): string {
  if (!p.startsWith('"') && !p.includes("\n")) return p;
  return `"${p.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

export class FastImportSession {
  private buf: Buffer = Buffer.alloc(0);
  private readonly readers: Reader[] = [];
  private failure: Error | undefined;
  private ended = false;
  private readonly exit: Promise<void>;

  private constructor(private readonly proc: GitProcess) {
    proc.stdout.on("data", (chunk: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
      this.drain();
    });
    this.exit = proc.exit.then(
      () => {
        this.failAll(new GitError("git fast-import ended before answering", ["fast-import"], "", 0));
      },
      (err: Error) => {
        this.failure = err;
        this.failAll(err);
        throw err;
      },
    );
    // The outcome is read by finish()/abort(); a session abandoned on an error must not leave
    // an unhandled rejection behind.
    this.exit.catch(() => undefined);
  }

  /**
   * Starts fast-import. `core.fsync=none`: it would fsync the pack it stages in (~15 ms per
   * checkpoint), which plain `git add` does not do for loose objects either; a crash that leaves
   * damaged objects is detected and the repository rebuilt (WorkspaceCheckpoints).
   */
  static open(git: ShadowGit, options: { signal?: AbortSignal; keepPacks?: boolean } = {}): FastImportSession {
    // fast-import turns a small pack into loose objects with a second process (unpack-objects)
    // each time it ends one. `keepPacks` skips that for rare, latency-bound sessions (restores
    // end two packs); turns keep loose objects so that packs do not pile up between gcs.
    const unpack = options.keepPacks ? ["-c", "fastimport.unpackLimit=0"] : [];
    return new FastImportSession(
      git.spawn(["-c", "core.fsync=none", ...unpack, "fast-import", "--quiet", "--force", "--done"], {
        signal: options.signal,
      }),
    );
  }

  /** Mode and id of `path` in a commit or tree (`dataref`: full id or `:mark`); undefined when absent or a folder. */
  ls(dataref: string, path: string): Promise<TreeEntry | undefined> {
    return this.ask(`ls ${dataref} ${quotePath(path)}\n`, (line) => {
      if (line.startsWith("missing ")) return undefined;
      const [mode, type, id] = line.slice(0, line.indexOf("\t")).split(" ");
      if (mode === undefined || id === undefined)
        throw new GitError("unexpected answer of git fast-import", ["fast-import"], `ls ${dataref}: ${line}`, 1);
      return type === "tree" ? undefined : { mode, id };
    });
  }

  /** The root tree id of a commit (or a mark). */
  async rootTree(dataref: string): Promise<string> {
    const line = await this.ask(`ls ${dataref} ""\n`, (l) => l);
    const [, type, id] = (line.split("\t", 1)[0] ?? "").split(" ");
    if (type !== "tree" || id === undefined)
      throw new GitError("not a commit with a tree", ["fast-import"], `bad tree object ${dataref}: ${line}`, 1);
    return id;
  }

  /** The commit id a mark stands for. */
  getMark(mark: number): Promise<string> {
    return this.ask(`get-mark :${mark}\n`, (l) => l.trim());
  }

  /** A blob's content; a missing blob rejects (the restore has then touched nothing yet). */
  catBlob(id: string): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      this.send(`cat-blob ${id}\n`);
      this.readers.push({
        reject,
        take: (buf, pos) => {
          const nl = buf.indexOf(10, pos);
          if (nl < 0) return -1;
          const header = buf.subarray(pos, nl).toString("latin1").split(" ");
          if (header[1] !== "blob") {
            reject(new GitError("checkpoint objects are missing", ["fast-import"], `missing blob ${id}`, 1));
            return nl + 1;
          }
          const end = nl + 1 + Number(header[2]);
          if (buf.length < end + 1) return -1;
          resolve(Buffer.from(buf.subarray(nl + 1, end)));
          return end + 1;
        },
      });
    });
  }

  /** A parentless commit at `ref` (the ref is reset first, so it never gets a parent). */
  commit(c: SessionCommit): void {
    const parts: Buffer[] = [];
    const text = (s: string) => parts.push(Buffer.from(s, "utf8"));
    const message = Buffer.from(c.message, "utf8");
    text(`reset ${c.ref}\n\ncommit ${c.ref}\nmark :${c.mark}\n`);
    text(`committer ${c.identity.name} <${c.identity.email}> ${Math.floor(c.timeMs / 1000)} +0000\n`);
    text(`data ${message.length}\n`);
    parts.push(message);
    text(`\nM 040000 ${c.baseTree} ""\n`);
    for (const ch of c.changes) {
      if (ch.mode === "delete") {
        text(`D ${quotePath(ch.path)}\n`);
      } else if (ch.id) {
        text(`M ${ch.mode} ${ch.id} ${quotePath(ch.path)}\n`);
      } else {
        const content = ch.content ?? Buffer.alloc(0);
        text(`M ${ch.mode} inline ${quotePath(ch.path)}\ndata ${content.length}\n`);
        parts.push(content);
        text("\n");
      }
    }
    text("\n");
    this.send(Buffer.concat(parts));
  }

  /** Points `ref` at the commit of `mark` (written with the other refs). */
  resetTo(ref: string, mark: number): void {
    this.send(`reset ${ref}\nfrom :${mark}\n\n`);
  }

  /** Writes the pack and the refs so far; later answers arrive only once this is done. */
  checkpoint(): void {
    this.send("checkpoint\n\n");
  }

  /** Ends the stream: refs are written. Rejects with git's error when the import failed. */
  async finish(): Promise<void> {
    this.send("done\n");
    this.ended = true;
    this.proc.stdin.end();
    await this.exit;
  }

  /** Ends without `done`: fast-import discards what it has not checkpointed. */
  async abort(): Promise<void> {
    if (!this.ended) {
      this.ended = true;
      this.proc.stdin.end();
    }
    await this.exit.catch(() => undefined);
  }

  private ask<T>(command: string, parse: (line: string) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.send(command);
      this.readers.push({
        reject,
        take: (buf, pos) => {
          const nl = buf.indexOf(10, pos);
          if (nl < 0) return -1;
          try {
            resolve(parse(buf.subarray(pos, nl).toString("utf8")));
          } catch (err) {
            reject(err);
          }
          return nl + 1;
        },
      });
    });
  }

  private send(data: string | Buffer): void {
    if (this.failure) throw this.failure;
    if (this.ended) throw new GitError("fast-import session already ended", ["fast-import"], "", null);
    this.proc.stdin.write(data);
  }

  private drain(): void {
    let pos = 0;
    for (let reader = this.readers[0]; reader; reader = this.readers[0]) {
      const next = reader.take(this.buf, pos);
      if (next < 0) break;
      pos = next;
      this.readers.shift();
    }
    this.buf = pos >= this.buf.length ? Buffer.alloc(0) : this.buf.subarray(pos);
  }

  private failAll(err: Error): void {
    for (const r of this.readers.splice(0)) r.reject(err);
  }
}
