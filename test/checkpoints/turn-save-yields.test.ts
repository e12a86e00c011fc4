// A turn's checkpoint is queued when the turn ends but begun only once the process has looked at
// its pending I/O: the turn loop sends the next model request meanwhile (CheckpointManager.saveTurn).
// Before, the save took the repository lock and wrote its pack and refs first, with synchronous
// calls, so the request left (and the model began its answer) a save later, every turn.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { makeManager, makeSandbox, write } from "./helpers.js";

describe("a turn's checkpoint", () => {
  it("begins after the I/O already pending, and an edit of the next turn still waits for it", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, "src/a.ts", "a\n");
    const task = { id: "t1", workspaceRoots: [ws] };
    const manager = makeManager(sb);
    await manager.ensureBaseline(task);
    await manager.idle();
    const repoDir = sb.layout.checkpointRepoDir(ws);
    const refsOfTask = () => fs.readdirSync(path.join(repoDir, ".git", "refs", "dline", "tasks", "t1")).length;
    expect(refsOfTask()).toBe(1);

    write(ws, "src/a.ts", "turn 1\n");
    const saving = manager.saveTurn(task, { editedPaths: ["src/a.ts"] });
    // What the process had pending when the turn ended (the next request's socket write, say)
    // comes first: the save has neither taken the repository lock nor written anything yet.
    const begunBefore = await new Promise<boolean>((resolve) =>
      setImmediate(() => resolve(fs.existsSync(path.join(repoDir, "repo.lock")) || refsOfTask() > 1)),
    );
    expect(begunBefore).toBe(false);
    // The next turn's edit of the same file waits for the save: the checkpoint holds turn 1's text.
    await manager.beforeEdit(task, ["src/a.ts"]);
    write(ws, "src/a.ts", "turn 2\n");
    const saved = (await saving)!;
    expect(refsOfTask()).toBe(2);
    await manager.restore("t1", saved.id, "files");
    expect(fs.readFileSync(path.join(ws, "src/a.ts"), "utf8")).toBe("turn 1\n");
    await manager.stop();
  });
});
