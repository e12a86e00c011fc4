import { createHash } from "node:crypto";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { splitNul, type ShadowGit } from "./git-process.js";
import { toAbsolute } from "./workspace-paths.js";

/**
 * Commits "the previous snapshot plus these paths" with one `git fast-import`, without reading
 * or writing the 20,000- or 100,000-entry index: the cost follows the number of paths, not the
 * size of the tree. The index then lags the snapshot for those paths; the next scan compares
 * HEAD, index and work tree and restages them (SnapshotStager.stageScan).
 */
export interface PathChange {
  path: string;
  /** "delete" removes the path from the snapshot. */
  mode: "100644" | "100755" | "120000" | "delete";
  /** File content, or the link target for 120000. */
  content?: Buffer;
}

export interface FastCommitResult {
  commit: string;
  tree: string;
}

export type TreeEntries = Map<string, { mode: string; id: string }>;
type Change = PathChange | { path: string; mode: string; id: string };

/** Whether applying `changes` to a tree with `base` entries changes anything. */
export function changesTree(base: TreeEntries, changes: Change[]): boolean {
  return changes.some((c) => {
    const before = base.get(c.path);
    if (c.mode === "delete") return before !== undefined;
    const id = "id" in c ? c.id : blobId(c.content ?? Buffer.alloc(0));
    return !before || before.id !== id || before.mode !== c.mode;
  });
}

/** Reads what changed for each path from the work tree (missing -> delete). */
export async function readPathChanges(workspaceRoot: string, paths: string[]): Promise<PathChange[]> {
  return Promise.all(
    paths.map(async (p): Promise<PathChange> => {
      const abs = toAbsolute(workspaceRoot, p);
      const st = await fs.lstat(abs).catch(() => undefined);
      if (!st || st.isDirectory()) return { path: p, mode: "delete" };
      if (st.isSymbolicLink()) return { path: p, mode: "120000", content: Buffer.from(await fs.readlink(abs)) };
      const content = await fs.readFile(abs).catch(() => undefined);
      if (!content) return { path: p, mode: "delete" };
      return { path: p, mode: st.mode & 0o111 ? "100755" : "100644", content };
    }),
  );
}

function blobId(content: Buffer): string {
  return createHash("sha1").update(`blob ${content.length}\0`).update(content).digest("hex");
}

/** fast-import path syntax: C-style quoted when it starts with a quote or holds a newline. */
function quotePath(p: string): string {
  if (!p.startsWith('"') && !p.includes("\n")) return p;
  return `"${p.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

export class FastCommitter {
  constructor(
    private readonly git: ShadowGit,
    private readonly gitDir: string,
  ) {}

  /** True when this repository can take fast commits (files ref store, SHA-1 objects). */
  async usable(): Promise<boolean> {
    const reftable = await fs.stat(path.join(this.gitDir, "reftable")).then(() => true, () => false);
    const config = await fs.readFile(path.join(this.gitDir, "config"), "utf8").catch(() => "");
    return !reftable && !/objectformat\s*=\s*sha256/i.test(config);
  }

  /** Mode and blob id of each path in `treeish` (absent paths are missing from the map). */
  async entries(treeish: string, paths: string[], signal?: AbortSignal): Promise<TreeEntries> {
    const result: TreeEntries = new Map();
    const wanted = new Set(paths);
    for (let i = 0; i < paths.length; i += 200) {
      const chunk = paths.slice(i, i + 200);
      const out = await this.git.run(["ls-tree", "-z", "--full-tree", treeish, "--", ...chunk], { signal });
      for (const line of splitNul(out.stdout)) {
        const tab = line.indexOf("\t");
        const [mode, , id] = line.slice(0, tab).split(" ");
        const p = line.slice(tab + 1);
        if (wanted.has(p)) result.set(p, { mode, id });
      }
    }
    return result;
  }

  /**
   * Writes a parentless commit whose tree is `baseTree` with `changes` applied, at `ref`, and
   * moves `headRef` to it. Paths given as `{ mode, id }` reuse stored blobs (restores).
   */
  async commit(options: {
    baseTree: string;
    changes: Change[];
    message: string;
    ref: string;
    headRef: string;
    timeMs: number;
    identity: { name: string; email: string };
    signal?: AbortSignal;
  }): Promise<FastCommitResult> {
    const parts: Buffer[] = [];
    const text = (s: string) => parts.push(Buffer.from(s, "utf8"));
    const message = Buffer.from(options.message, "utf8");
    text(`commit ${options.ref}\nmark :1\n`);
    text(`committer ${options.identity.name} <${options.identity.email}> ${Math.floor(options.timeMs / 1000)} +0000\n`);
    text(`data ${message.length}\n`);
    parts.push(message);
    text(`\nM 040000 ${options.baseTree} ""\n`);
    for (const c of options.changes) {
      if (c.mode === "delete") {
        text(`D ${quotePath(c.path)}\n`);
      } else if ("id" in c) {
        text(`M ${c.mode} ${c.id} ${quotePath(c.path)}\n`);
      } else {
        const content = c.content ?? Buffer.alloc(0);
        text(`M ${c.mode} inline ${quotePath(c.path)}\ndata ${content.length}\n`);
        parts.push(content);
        text("\n");
      }
    }
    text(`reset ${options.headRef}\nfrom :1\n\nget-mark :1\nls :1 ""\ndone\n`);
    const out = (
      // core.fsync=none: fast-import fsyncs the pack it stages in, ~15 ms per checkpoint, which
      // plain `git add` does not do for loose objects either; a crash that leaves empty
      // objects is detected and the repository rebuilt (WorkspaceCheckpoints).
      await this.git.run(["-c", "core.fsync=none", "fast-import", "--quiet", "--force", "--done"], {
        input: Buffer.concat(parts),
        signal: options.signal,
      })
    ).stdout.toString("utf8");
    const [commitLine, lsLine] = out.split("\n");
    const tree = lsLine?.split(/\s+/)[2] ?? "";
    return { commit: commitLine.trim(), tree };
  }
}
