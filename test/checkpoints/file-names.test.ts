import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { CheckpointTask } from "../../core/src/checkpoints/index.js";
import { FileConversation, makeManager, makeSandbox, read, write } from "./helpers.js";

/** `lat<é in Latin-1>.txt`: a name of an older archive, not valid UTF-8. */
function latin1Name(ws: string): Buffer {
  return Buffer.concat([Buffer.from(`${ws}/lat`), Buffer.from([0xe9]), Buffer.from(".txt")]);
}

describe("file names", () => {
  it("a file whose name is not UTF-8 is reported as left out, and a restore leaves it as it is", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [ws] });
    const manager = makeManager(sb, { conversation });
    const task: CheckpointTask = { id: "t1", workspaceRoots: [ws] };
    write(ws, "café.txt", "v1\n");
    write(ws, "new\nline.txt", "v1\n");
    fs.writeFileSync(latin1Name(ws), "the user's bytes\n");

    const base = (await manager.ensureBaseline(task))!;
    // Before, the scan decoded the name (é became U+FFFD, another file) and left it out silently.
    expect(base.skipped).toContainEqual({ path: "lat\uFFFD.txt", reason: "name_not_utf8" });

    // A command changes the other files and this one.
    write(ws, "café.txt", "v2\n");
    write(ws, "new\nline.txt", "v2\n");
    fs.writeFileSync(latin1Name(ws), "changed by a command\n");
    const turn = (await manager.saveTurn(task, { commandRan: true }))!;
    expect(turn.skipped).toContainEqual({ path: "lat\uFFFD.txt", reason: "name_not_utf8" });

    const outcome = await manager.restore("t1", base.id, "files");
    expect(outcome.restoredPaths.sort()).toEqual(["café.txt", "new\nline.txt"]);
    expect(outcome.deletedPaths).toEqual([]);
    expect(read(ws, "café.txt")).toBe("v1\n");
    expect(read(ws, "new\nline.txt")).toBe("v1\n");
    // Left as it is: never written over by a file of another name, never deleted.
    expect(fs.readFileSync(latin1Name(ws), "utf8")).toBe("changed by a command\n");
    expect(fs.readdirSync(ws).filter((n) => n.startsWith("lat"))).toEqual(["lat\uFFFD.txt"]);
  });
});
