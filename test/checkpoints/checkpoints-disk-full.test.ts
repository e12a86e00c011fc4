// From a bug hunt: with the disk that holds the checkpoints full, `dline checkpoints` and a
// refused restore said only "The disk is full.", which a person could take for the project's
// disk. The answer names where the checkpoints are kept. The checkpoints' documents root is put
// on a small tmpfs (mounted for the test: root only; it says why it is skipped otherwise).
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DlineError } from "../../core/src/errors.js";
import { InstanceLayout } from "../../core/src/storage/instance-layout.js";
import { fillDisk, mountSmallTmpfs } from "../helpers/small-disk.js";
import { FileConversation, makeManager, makeSandbox, read, write } from "./helpers.js";

const mount = mountSmallTmpfs(8);
const mounted = "dir" in mount ? mount : undefined;
afterAll(() => mounted?.unmount());

describe.skipIf(!mounted)(
  `the disk holding the checkpoints full ${mounted ? "" : `(skipped: ${"reason" in mount ? mount.reason : ""})`}`,
  () => {
    it("a restore refused and a compare say it is that disk, and where; a listing still answers; the project's files are not touched", async () => {
      const sandbox = makeSandbox();
      const layout = new InstanceLayout({
        dataRoot: path.join(sandbox.base, "data"),
        homeRoot: path.join(sandbox.base, "dline-home"),
        documentsRoot: path.join(mounted!.dir, "docs"),
      });
      const sb = { ...sandbox, layout };
      const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [sb.workspace] });
      const manager = makeManager(sb, { conversation });
      const task = { id: "t1", workspaceRoots: [sb.workspace] };
      write(sb.workspace, "a.txt", "before\n");
      const base = (await manager.ensureBaseline(task))!;
      await manager.beforeEdit(task, ["a.txt"]);
      write(sb.workspace, "a.txt", "by the task\n");
      await manager.saveTurn(task, { editedPaths: ["a.txt"] });
      await manager.idle();

      const filler = fillDisk(mounted!.dir);
      try {
        const said = `The disk that holds the checkpoints (${layout.checkpointsDir}) is full. Make room there and try again.`;
        const restore = (await manager.restore("t1", base.id, "files").catch((e: unknown) => e)) as DlineError;
        expect(restore).toBeInstanceOf(DlineError);
        expect([restore.code, restore.message]).toEqual(["resource_exhausted", said]);
        expect(read(sb.workspace, "a.txt")).toBe("by the task\n");
        // A listing writes nothing: it is answered without the lock (whose folder cannot be made).
        // Before, it failed with the disk full.
        const list = await manager.list("t1");
        expect(list.map((c) => c.kind)).toEqual(["baseline", "turn"]);
        // Compare takes the workspace in first (it writes): refused, saying where.
        const compare = (await manager.compare("t1", base.id).catch((e: unknown) => e)) as DlineError;
        expect(compare instanceof DlineError ? [compare.code, compare.message] : compare).toEqual([
          "resource_exhausted",
          said,
        ]);
      } finally {
        fs.rmSync(filler, { force: true });
      }
      const restored = await manager.restore("t1", base.id, "files");
      expect(restored.fileError).toBe("");
      expect(read(sb.workspace, "a.txt")).toBe("before\n");
      await manager.stop();
    });
  },
);
