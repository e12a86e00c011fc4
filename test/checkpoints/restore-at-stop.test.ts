import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { holdGitStatus, releaseHeldGits } from "./fixtures/held-git.js";
import { FileConversation, makeManager, makeSandbox, read, settlesWithin, until, write } from "./helpers.js";

/**
 * A sidecar that stops while one of its restores is under way (the CLI left with a second Ctrl-C,
 * the editor window closed): the restore ends before the checkpoints' git processes are killed.
 * Before, the stop killed them at once, and a restore that had begun stopped part-way. The
 * lifecycle's stop budget still bounds the wait.
 */
afterEach(() => releaseHeldGits());

describe("a sidecar stopping during a restore", () => {
  it("lets the restore that holds the repository end, then stops", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [ws] });
    const task = { id: "t1", workspaceRoots: [ws] };
    write(ws, "a.txt", "A\n");
    write(ws, "b.txt", "B\n");
    const first = makeManager(sb, { conversation });
    const base = (await first.ensureBaseline(task))!;
    // A file changed and one made, nothing recorded: a restore resets every file (its undo
    // checkpoint scans the workspace).
    write(ws, "a.txt", "A, changed\n");
    write(ws, "made.txt", "made\n");
    await first.saveTurn(task, {});
    await first.stop();

    // Another process restores; its undo checkpoint's scan is held, as a large workspace's is.
    const held = holdGitStatus(sb.base);
    const restoring = makeManager(sb, { conversation, env: { ...sb.env, PATH: held.path } });
    const restore = restoring.restore("t1", base.id, "files");
    const outcome = restore.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    await until(held.holding);
    // The process stops meanwhile; the scan then goes on.
    let stopped = false;
    const stopping = restoring.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(stopped).toBe(false);
    held.release();
    const answer = await outcome;
    await stopping;
    expect("error" in answer ? String(answer.error) : "").toBe("");
    expect("value" in answer && answer.value.deletedPaths).toEqual(["made.txt"]);
    expect(read(ws, "a.txt")).toBe("A\n");
    expect(read(ws, "made.txt")).toBeUndefined();
  });

  it("a restore still waiting for another window's lock when the stop begins does not begin", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [ws] });
    const task = { id: "t1", workspaceRoots: [ws] };
    write(ws, "a.txt", "A\n");
    const first = makeManager(sb, { conversation });
    const base = (await first.ensureBaseline(task))!;
    write(ws, "a.txt", "A, changed by a command\n");
    await first.saveTurn(task, { commandRan: true });
    await first.stop();

    // Another window holds the repository (its scan, held).
    const held = holdGitStatus(sb.base);
    const other = makeManager(sb, { env: { ...sb.env, PATH: held.path } });
    const othersWork = other.ensureBaseline({ id: "other", workspaceRoots: [ws] });
    await until(held.holding);
    const restoring = makeManager(sb, { conversation });
    const outcome = restoring.restore("t1", base.id, "files").then(
      () => "restored",
      (error: unknown) => String(error),
    );
    await new Promise((r) => setTimeout(r, 300));
    const stopping = restoring.stop();
    held.release();
    await othersWork;
    expect(await outcome).toContain("The Dline core is stopping: nothing was restored.");
    await stopping;
    await other.stop();
    expect(read(ws, "a.txt")).toBe("A, changed by a command\n");
  });

  it("the process's first step of its stop waits for a whole restore under way (its conversation part too), up to a bound", async () => {
    const sb = makeSandbox();
    const ws = sb.workspace;
    const conversation = new FileConversation(path.join(sb.base, "conversations"), { t1: [ws] });
    const task = { id: "t1", workspaceRoots: [ws] };
    write(ws, "a.txt", "A\n");
    const first = makeManager(sb, { conversation });
    conversation.addMessage("t1", "m1", "first");
    const base = (await first.ensureBaseline(task, "m1"))!;
    write(ws, "a.txt", "A, changed\n");
    await first.saveTurn(task, {});
    await first.stop();

    const held = holdGitStatus(sb.base);
    const restoring = makeManager(sb, { conversation, env: { ...sb.env, PATH: held.path } });
    const restore = restoring.restore("t1", base.id, "files_and_task");
    await until(held.holding);
    // Bounded: while the restore is held, the wait ends at its bound.
    let ended = false;
    await restoring.restoresEnded(200).then(() => (ended = true));
    expect(ended).toBe(true);
    // Released, the wait ends with the restore, files and conversation both.
    const waiting = restoring.restoresEnded(30_000);
    held.release();
    await waiting;
    expect(await settlesWithin(restore, 0)).toBe(true);
    expect(await restore).toMatchObject({ filesRestored: true, conversationRestored: true });
    expect(read(ws, "a.txt")).toBe("A\n");
    await restoring.stop();
  });
});
