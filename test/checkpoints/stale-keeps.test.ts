// From a bug hunt: restores killed part-way (kill -9) left fast-import's `pack-*.keep` files and
// empty `tmp_pack_*` files in the shadow repository's packs folder, there for good: the pruning
// of unreachable packs skips a pack git was told to keep.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { makeManager, makeSandbox, write } from "./helpers.js";

describe("what a killed fast-import left in the packs folder", () => {
  it("is removed by the next process's first save: its .keep, and temporary pack files over an hour old", async () => {
    const sb = makeSandbox();
    write(sb.workspace, "a.txt", "one\n");
    const first = makeManager(sb);
    await first.ensureBaseline({ id: "t1", workspaceRoots: [sb.workspace] });
    await first.stop();

    const packDir = path.join(sb.layout.checkpointRepoDir(sb.workspace), ".git", "objects", "pack");
    fs.mkdirSync(packDir, { recursive: true });
    // As fast-import leaves it beside the pack it wrote (a copy of the objects stands for it here).
    const pack = `pack-${"1".repeat(40)}`;
    fs.writeFileSync(path.join(packDir, `${pack}.pack`), "");
    const keep = path.join(packDir, `${pack}.keep`);
    fs.writeFileSync(keep, "fast-import");
    const stale = path.join(packDir, "tmp_pack_AbCdEf");
    fs.writeFileSync(stale, "");
    const hoursAgo = new Date(Date.now() - 2 * 3600_000);
    fs.utimesSync(stale, hoursAgo, hoursAgo);
    // A fresh one may be a repack's under way; a .keep of someone else's words is not fast-import's.
    const fresh = path.join(packDir, "tmp_pack_GhIjKl");
    fs.writeFileSync(fresh, "");
    const other = path.join(packDir, "pack-0000000000000000000000000000000000000000.keep");
    fs.writeFileSync(other, "kept on purpose");

    const next = makeManager(sb);
    const task = { id: "t2", workspaceRoots: [sb.workspace] };
    await next.ensureBaseline(task);
    await next.idle();
    expect([fs.existsSync(keep), fs.existsSync(stale)]).toEqual([false, false]);
    expect([fs.existsSync(fresh), fs.existsSync(other)]).toEqual([true, true]);
    await next.stop();
  });
});
