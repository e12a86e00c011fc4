import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { CheckpointTask } from "../../core/src/checkpoints/index.js";
import { makeManager, makeSandbox, read, write } from "./helpers.js";

// Saving checkpoints of a workspace whose shape changed under them: a save that fails leaves the
// task without a way back for everything after it.

function setup() {
  const sb = makeSandbox();
  const manager = makeManager(sb);
  const task: CheckpointTask = { id: "t1", workspaceRoots: [sb.workspace] };
  return { sb, manager, task, ws: sb.workspace };
}

const changes = [
  {
    name: "a folder replaced by a file of the same name",
    before: (ws: string) => write(ws, "lib/deep/x.txt", "x v1\n"),
    after: (ws: string) => {
      fs.rmSync(path.join(ws, "lib"), { recursive: true });
      write(ws, "lib", "a file now\n");
    },
    edited: ["lib/deep/x.txt", "lib"],
    oldShape: (ws: string) => read(ws, "lib/deep/x.txt") === "x v1\n",
  },
  {
    name: "a file replaced by a folder of the same name",
    before: (ws: string) => write(ws, "lib", "a file\n"),
    after: (ws: string) => {
      fs.rmSync(path.join(ws, "lib"));
      write(ws, "lib/deep/x.txt", "x now\n");
    },
    edited: ["lib", "lib/deep/x.txt"],
    oldShape: (ws: string) => read(ws, "lib") === "a file\n",
  },
];

for (const change of changes) {
  describe(`checkpoints of ${change.name}`, () => {
    for (const rule of ["a scan (after a command)", "the recorded paths (after a tool's edits)"]) {
      it(`are saved by ${rule}, and hold the new shape`, async () => {
        const { manager, task, ws } = setup();
        write(ws, "a.txt", "a v1\n");
        change.before(ws);
        const base = (await manager.ensureBaseline(task))!;
        change.after(ws);
        write(ws, "a.txt", "a v2\n");
        const saved = await manager.saveTurn(
          task,
          rule.startsWith("a scan") ? { commandRan: true } : { editedPaths: [...change.edited, "a.txt"] },
        );
        expect(saved).toBeDefined();
        expect((await manager.status({ taskId: "t1" })).state).toBe("ready");
        const { files } = await manager.compare("t1", base.id);
        expect(files.map((f) => f.path)).toContain("a.txt");
        // By either rule the undo point holds the new file or folder (a scan saw it; the tool
        // recorded its paths), so it goes and the old shape comes back; undoing the restore
        // brings the new shape back.
        const back = await manager.restore("t1", base.id, "files");
        expect(read(ws, "a.txt")).toBe("a v1\n");
        expect(change.oldShape(ws)).toBe(true);
        await manager.restore("t1", back.undoCheckpointId, "files");
        expect(read(ws, "a.txt")).toBe("a v2\n");
        expect(change.oldShape(ws)).toBe(false);
        // The checkpoint just saved restores: it is the workspace as it is.
        const outcome = await manager.restore("t1", saved!.id, "files");
        expect(outcome.deletedPaths).toEqual([]);
        expect(read(ws, "a.txt")).toBe("a v2\n");
      });
    }
  });
}
