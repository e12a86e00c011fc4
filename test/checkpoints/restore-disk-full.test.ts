import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DlineError } from "../../core/src/errors.js";
import { fillDisk, freeBytes, mountSmallTmpfs } from "../helpers/small-disk.js";
import { FileConversation, makeManager, makeSandbox, read, write } from "./helpers.js";

/**
 * A restore that runs out of room in the workspace's file system part-way: no half-written copy
 * stays behind holding the space, and the answer says which files it had restored and which
 * checkpoint undoes them.
 */
const mount = mountSmallTmpfs(8);
const mounted = "dir" in mount ? mount : undefined;
afterAll(() => mounted?.unmount());

function restoreCopies(dir: string): string[] {
  return fs.readdirSync(dir).filter((name) => name.includes(".dline-restore-"));
}

describe.skipIf(!mounted)(
  `a restore on a full disk ${mounted ? "" : `(skipped: ${"reason" in mount ? mount.reason : ""})`}`,
  () => {
    it("leaves no partial copy, names what it had restored and the undo checkpoint; that undo works once there is room", async () => {
      const sb = { ...makeSandbox(), workspace: path.join(mounted!.dir, "ws") };
      fs.mkdirSync(sb.workspace);
      const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [sb.workspace] });
      const manager = makeManager(sb, { conversation });
      const task = { id: "t1", workspaceRoots: [sb.workspace] };
      const ws = sb.workspace;
      write(ws, "r1.txt", Buffer.alloc(1024 * 1024, 49));
      write(ws, "r2.txt", Buffer.alloc(1024 * 1024, 50));
      const base = (await manager.ensureBaseline(task))!;
      for (const name of ["r1.txt", "r2.txt"]) {
        await manager.beforeEdit(task, [name]);
        write(ws, name, `${name} by the task\n`);
      }
      await manager.saveTurn(task, { editedPaths: ["r1.txt", "r2.txt"] });

      // Room for one of the two files the restore writes back, not both.
      const filler = fillDisk(mounted!.dir);
      fs.truncateSync(filler, Math.max(0, fs.statSync(filler).size - 1536 * 1024));
      expect(freeBytes(mounted!.dir)).toBeLessThan(2 * 1024 * 1024);

      const err = (await manager.restore("t1", base.id, "files").catch((e: unknown) => e)) as DlineError;
      expect(err).toBeInstanceOf(DlineError);
      expect(err.code).toBe("resource_exhausted");
      expect(err.message).toMatch(
        /^The disk is full\. The restore stopped part-way: 1 file\(s\) were already restored \(r[12]\.txt\)\. Restoring the "before restore" checkpoint [0-9a-f]{40} puts them back as they were\.$/,
      );
      expect(restoreCopies(ws)).toEqual([]);

      fs.rmSync(filler);
      const undoId = /checkpoint ([0-9a-f]{40})/.exec(err.message)![1]!;
      await manager.restore("t1", undoId, "files");
      expect([read(ws, "r1.txt"), read(ws, "r2.txt")]).toEqual(["r1.txt by the task\n", "r2.txt by the task\n"]);
      expect(restoreCopies(ws)).toEqual([]);
      await manager.stop();
    });
  },
);

describe("a restore's copy that a killed process left behind", () => {
  it("is never taken into a snapshot (a later restore would list it as a file to delete)", async () => {
    const sb = makeSandbox();
    const manager = makeManager(sb);
    const task = { id: "t1", workspaceRoots: [sb.workspace] };
    write(sb.workspace, "lib/pull.js", "module.exports = 1;\n");
    write(sb.workspace, "lib/pull.js.dline-restore-4242", "module.exports =");
    const base = (await manager.ensureBaseline(task))!;
    expect(base.skipped).toContainEqual({ path: "lib/pull.js.dline-restore-4242", reason: "excluded_type" });
    const { files } = await manager.compare("t1", base.id);
    expect(files).toEqual([]);
    await manager.stop();
  });
});
