import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { makeManager, makeSandbox, write } from "./helpers.js";
import { nth, firstOf } from "../helpers/items.js";

/** The system git on the shadow repository itself (what another tool or a gc would do). */
function shadowGit(gitDir: string, ...args: string[]): string {
  return execFileSync("git", ["--git-dir", gitDir, ...args], {
    env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
    encoding: "utf8",
  });
}

const ids = (cps: { id: string; seq: number; kind: string }[]) => cps.map((c) => `${c.seq}:${c.kind}:${c.id}`);

describe("listing a task's checkpoints", () => {
  it("shows what other processes wrote and deleted since, packed refs too, as a fresh process lists it", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    write(ws, "a.txt", "a0");
    const task = { id: "t1", workspaceRoots: [ws] };
    const mine = makeManager(sb);
    expect(await mine.list("t1").catch(() => [])).toEqual([]);
    await mine.ensureBaseline(task);
    write(ws, "a.txt", "a1");
    await mine.saveTurn(task, { editedPaths: ["a.txt"] });
    const first = await mine.list("t1");
    expect(first.map((c) => c.kind)).toEqual(["baseline", "turn"]);
    // A caller changing what it was given changes nothing for the next listing.
    nth(first, 0, "checkpoint").kind = "completion";
    first.reverse();
    expect((await mine.list("t1")).map((c) => c.kind)).toEqual(["baseline", "turn"]);

    // Another process (another sidecar, the CLI) saves a turn and restores: this one sees both.
    const other = makeManager(sb);
    write(ws, "a.txt", "a2");
    await other.saveTurn(task, { editedPaths: ["a.txt"] });
    const target = nth(await other.list("t1"), 1, "checkpoint");
    await other.restore("t1", target.id, "files");
    const gitDir = path.join(sb.layout.checkpointRepoDir(ws), ".git");
    const fresh = async () => ids(await makeManager(sb).list("t1"));
    expect(ids(await mine.list("t1"))).toEqual(await fresh());
    expect((await mine.list("t1")).map((c) => c.kind)).toEqual(["baseline", "turn", "turn", "before_restore"]);
    expect((await mine.list("t1")).at(-1)).toMatchObject({ undoAvailable: true });

    // The refs packed (git pack-refs, as a gc does), then one of them deleted by git.
    shadowGit(gitDir, "pack-refs", "--all");
    expect(ids(await mine.list("t1"))).toEqual(await fresh());
    const third = nth(await mine.list("t1"), 2, "checkpoint");
    shadowGit(gitDir, "update-ref", "-d", third.ref);
    expect(ids(await mine.list("t1"))).toEqual(await fresh());
    expect((await mine.list("t1")).map((c) => c.kind)).toEqual(["baseline", "turn", "before_restore"]);

    // A ref moved to another checkpoint's commit under the same name.
    const [baseline, turn] = firstOf(await mine.list("t1"), 2, "checkpoint");
    shadowGit(gitDir, "update-ref", turn.ref, baseline.id);
    expect(ids(await mine.list("t1"))).toEqual(await fresh());
    expect((await mine.list("t1"))[1]).toMatchObject({ id: baseline.id, kind: "baseline" });

    // This process's own next save is listed, and the task's deletion empties the list.
    write(ws, "a.txt", "a3");
    await mine.saveTurn(task, { editedPaths: ["a.txt"] });
    expect(ids(await mine.list("t1"))).toEqual(await fresh());
    await other.deleteTask("t1", ws);
    expect(await mine.list("t1")).toEqual([]);
  });
});
