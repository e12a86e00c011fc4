import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { DlineError } from "../../core/src/errors.js";
import { FileConversation, makeManager, makeSandbox, write } from "./helpers.js";

/**
 * The task's workspace folder moved or deleted after the task (found in a bug hunt through the
 * CLI: `dline checkpoints`, `compare` and `restore` each answered "internal: Internal error in
 * the Dline core; see its log", the log saying the folder did not exist). The listing needs
 * only the checkpoint repository; compare and restore say which folder is missing.
 */
describe("a task whose workspace folder is gone", () => {
  async function taskThenMoveAway() {
    const sb = makeSandbox();
    const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [sb.workspace] });
    const manager = makeManager(sb, { conversation });
    const task = { id: "t1", workspaceRoots: [sb.workspace] };
    write(sb.workspace, "a.txt", "a\n");
    const base = (await manager.ensureBaseline(task))!;
    await manager.beforeEdit(task, ["a.txt"]);
    write(sb.workspace, "a.txt", "b\n");
    await manager.saveTurn(task, { editedPaths: ["a.txt"] });
    // A fresh process (as the CLI is): nothing of the workspace known in memory.
    await manager.stop();
    fs.renameSync(sb.workspace, `${sb.workspace}-moved`);
    return { sb, manager: makeManager(sb, { conversation }), base };
  }

  it("still lists its checkpoints", async () => {
    const { manager } = await taskThenMoveAway();
    const kinds = (await manager.list("t1")).map((c) => c.kind);
    expect(kinds).toEqual(["baseline", "turn"]);
    await manager.stop();
  });

  it("answers compare and restore with failed_precondition naming the missing folder, and creates nothing", async () => {
    const { sb, manager, base } = await taskThenMoveAway();
    for (const call of [() => manager.compare("t1", base.id), () => manager.restore("t1", base.id, "files")]) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(DlineError);
      expect((err as DlineError).code).toBe("failed_precondition");
      expect((err as DlineError).message).toContain(sb.workspace);
      expect((err as DlineError).message).toMatch(/does not exist/);
    }
    expect(fs.existsSync(sb.workspace)).toBe(false);
    await manager.stop();
  });
});
