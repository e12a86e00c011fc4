import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { CheckpointManager, CheckpointTask } from "../../core/src/checkpoints/index.js";
import { FileConversation, makeManager, makeSandbox, read, write } from "./helpers.js";

/**
 * A folder a command moved (`mv lib lib2`, as an agent's refactor does) keeps its birth time, so
 * a restore that brought `lib/` back left `lib2/` and its subfolders empty (6,438 folders on
 * babel). Now the moved copy goes, once every file in it came back at its old place; the
 * person's folders stay, empty ones included.
 */
function setup() {
  const sb = makeSandbox();
  const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [sb.workspace] });
  const manager = makeManager(sb, { conversation });
  const task: CheckpointTask = { id: "t1", workspaceRoots: [sb.workspace] };
  return { sb, manager, task, ws: sb.workspace };
}

const exists = (ws: string, rel: string) => fs.existsSync(path.join(ws, rel));

async function commandRan(manager: CheckpointManager, task: CheckpointTask, run: () => void): Promise<void> {
  run();
  await manager.saveTurn(task, { commandRan: true });
}

describe("a restore after a command moved a folder", () => {
  for (const withToolEdit of [false, true]) {
    it(`removes the moved copy, its empty subfolders too, and its undo brings it back${withToolEdit ? " (the task also edited a file with a tool)" : ""}`, async () => {
      const { manager, task, ws } = setup();
      write(ws, "lib/a.js", "a\n");
      write(ws, "lib/sub/b.js", "b\n");
      write(ws, "lib/sub/deep/c.js", "c\n");
      write(ws, "README.md", "readme\n");
      const base = (await manager.ensureBaseline(task))!;
      if (withToolEdit) {
        await manager.beforeEdit(task, ["README.md"]);
        write(ws, "README.md", "readme, edited\n");
        await manager.saveTurn(task, { editedPaths: ["README.md"] });
      }
      await commandRan(manager, task, () => fs.renameSync(path.join(ws, "lib"), path.join(ws, "lib2")));

      const outcome = await manager.restore("t1", base.id, "files");
      expect([read(ws, "lib/a.js"), read(ws, "lib/sub/b.js"), read(ws, "lib/sub/deep/c.js")]).toEqual([
        "a\n",
        "b\n",
        "c\n",
      ]);
      // Before: lib2/, lib2/sub/ and lib2/sub/deep/ stayed, empty.
      expect(exists(ws, "lib2")).toBe(false);
      expect(read(ws, "README.md")).toBe("readme\n");

      // Undone, the moved folder is back with its files, and lib/ goes again.
      await manager.restore("t1", outcome.undoCheckpointId, "files");
      expect([read(ws, "lib2/a.js"), read(ws, "lib2/sub/deep/c.js")]).toEqual(["a\n", "c\n"]);
      expect(exists(ws, "lib")).toBe(false);
      await manager.stop();
    });
  }

  it("a folder moved into one of the person's folders goes; the person's folder and files stay", async () => {
    const { manager, task, ws } = setup();
    write(ws, "src/util/x.js", "x\n");
    write(ws, "src/main.js", "main\n");
    write(ws, "lib/keep.js", "the person's\n");
    const base = (await manager.ensureBaseline(task))!;
    await commandRan(manager, task, () => fs.renameSync(path.join(ws, "src/util"), path.join(ws, "lib/util")));
    await manager.restore("t1", base.id, "files");
    expect(read(ws, "src/util/x.js")).toBe("x\n");
    expect(exists(ws, "lib/util")).toBe(false);
    expect(read(ws, "lib/keep.js")).toBe("the person's\n");
    await manager.stop();
  });

  it("the person's empty folder the files were moved into stays", async () => {
    const { manager, task, ws } = setup();
    write(ws, "gen/x.js", "x\n");
    fs.mkdirSync(path.join(ws, "dest"));
    const base = (await manager.ensureBaseline(task))!;
    // `mv gen/* dest/ && rmdir gen`: the files moved, their folder gone.
    await commandRan(manager, task, () => {
      fs.renameSync(path.join(ws, "gen/x.js"), path.join(ws, "dest/x.js"));
      fs.rmdirSync(path.join(ws, "gen"));
    });
    await manager.restore("t1", base.id, "files");
    expect(read(ws, "gen/x.js")).toBe("x\n");
    expect(fs.readdirSync(path.join(ws, "dest"))).toEqual([]);
    await manager.stop();
  });

  it("a moved folder that holds something the restore does not delete stays, with it", async () => {
    const { manager, task, ws } = setup();
    write(ws, ".gitignore", "*.log\n");
    write(ws, "lib/a.js", "a\n");
    const base = (await manager.ensureBaseline(task))!;
    await commandRan(manager, task, () => {
      fs.renameSync(path.join(ws, "lib"), path.join(ws, "lib2"));
      write(ws, "lib2/run.log", "ignored\n");
    });
    await manager.restore("t1", base.id, "files");
    expect(read(ws, "lib/a.js")).toBe("a\n");
    expect(read(ws, "lib2/run.log")).toBe("ignored\n");
    expect(exists(ws, "lib2/a.js")).toBe(false);
    await manager.stop();
  });
});
