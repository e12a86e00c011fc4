// From a bug hunt in a terminal: a restore into a folder made read-only (0555) stopped part-way,
// some files restored and others not ("1 file(s) were already restored"). The folders a restore
// writes in are checked before any file is touched. Root writes through 0555, so the folder is
// made immutable here (chattr +i), which stops root too.
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CheckpointManager, CheckpointTask } from "../../core/src/checkpoints/index.js";
import { DlineError } from "../../core/src/errors.js";
import { makeManager, makeSandbox, read, write } from "./helpers.js";

const locked: string[] = [];
afterEach(() => {
  for (const dir of locked.splice(0)) execFileSync("chattr", ["-i", dir]);
});

/** Makes `dir` unwritable for everyone; false where the file system cannot (then the test says so). */
function lock(dir: string): boolean {
  try {
    execFileSync("chattr", ["+i", dir], { stdio: "ignore" });
    locked.push(dir);
    return true;
  } catch {
    return false;
  }
}

async function toolWrite(manager: CheckpointManager, task: CheckpointTask, ws: string, rel: string, text: string) {
  await manager.beforeEdit(task, [rel]);
  write(ws, rel, text);
}

describe("a restore into a folder that cannot be written", () => {
  it("is refused before any file is touched, naming the folder; once writable, the restore goes through", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, "ro.txt", "ro before\n");
    write(ws, "locked/f.txt", "f before\n");
    const manager = makeManager(sb);
    const task = { id: "t1", workspaceRoots: [ws] };
    const base = (await manager.ensureBaseline(task))!;
    await toolWrite(manager, task, ws, "ro.txt", "ro by the task\n");
    await toolWrite(manager, task, ws, "locked/f.txt", "f by the task\n");
    await toolWrite(manager, task, ws, "locked/new.txt", "made by the task\n");
    await manager.saveTurn(task, { editedPaths: ["ro.txt", "locked/f.txt", "locked/new.txt"] });

    const dir = path.join(ws, "locked");
    if (!lock(dir)) {
      console.warn("chattr +i is not available on this file system: the refusal is not checked here");
      return;
    }
    const err = (await manager.restore("t1", base.id, "files").catch((e: unknown) => e)) as DlineError;
    expect(err).toBeInstanceOf(DlineError);
    expect(err.code).toBe("permission_denied");
    expect(err.message).toMatch(
      /^Cannot restore locked\/\S+: locked cannot be written \(E(PERM|ACCES)\)\. No file was restored\./,
    );
    expect([read(ws, "ro.txt"), read(ws, "locked/f.txt"), read(ws, "locked/new.txt")]).toEqual([
      "ro by the task\n",
      "f by the task\n",
      "made by the task\n",
    ]);

    execFileSync("chattr", ["-i", dir]);
    locked.splice(0);
    const restored = await manager.restore("t1", base.id, "files");
    expect(restored.fileError).toBe("");
    expect([read(ws, "ro.txt"), read(ws, "locked/f.txt"), read(ws, "locked/new.txt")]).toEqual([
      "ro before\n",
      "f before\n",
      undefined,
    ]);
    await manager.stop();
  });
});
