import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DlineError } from "../../core/src/errors.js";
import { holdGitStatus, releaseHeldGits } from "./fixtures/held-git.js";
import {
  FileConversation,
  makeManager,
  makeSandbox,
  read,
  settlesWithin,
  until,
  write,
  type Sandbox,
} from "./helpers.js";

/**
 * A file restore in one window and a task started in another at the same moment: the restore
 * must not write over the task's first edit. The task's edits wait while another window holds
 * the repository lock, and the restore asks again, once it holds the lock, whether a task runs.
 */

afterEach(() => releaseHeldGits());

/** A workspace an earlier task has checkpoints of (its shadow repository exists). */
async function usedWorkspace(): Promise<Sandbox> {
  const sb = makeSandbox();
  write(sb.workspace, "src/app.txt", "as the person left it\n");
  const earlier = makeManager(sb);
  const task = { id: "earlier", workspaceRoots: [sb.workspace] };
  await earlier.ensureBaseline(task);
  await earlier.saveCompletion(task);
  await earlier.stop();
  return sb;
}

/** The task store's answer, with tasks that start in other windows (each a running task's id). */
class RunningTasks extends FileConversation {
  readonly running = new Set<string>();
  /** A task another window starts just after the first look (the race under test). */
  startsAfterFirstLook?: string;
  async activeTasksIn(_workspaceRoot: string, exceptTaskId: string) {
    const answer = [...this.running].filter((id) => id !== exceptTaskId).map((id) => ({ id, title: "" }));
    if (this.startsAfterFirstLook) this.running.add(this.startsAfterFirstLook);
    this.startsAfterFirstLook = undefined;
    return answer;
  }
}

describe("a restore and a task started in another window at the same time", () => {
  it("the new task's first edit waits while another window holds the repository lock", async () => {
    const sb = await usedWorkspace();
    // Another window holds the lock (a long restore; here its scan, held).
    const held = holdGitStatus(sb.base);
    const other = makeManager(sb, { env: { ...sb.env, PATH: held.path } });
    const otherTask = { id: "other", workspaceRoots: [sb.workspace] };
    const othersWork = other.ensureBaseline(otherTask);
    await until(held.holding);

    const manager = makeManager(sb);
    const task = { id: "new", workspaceRoots: [sb.workspace] };
    const baseline = manager.ensureBaseline(task);
    const edit = manager.beforeEdit(task, ["src/app.txt"]);
    expect(await settlesWithin(edit, 500)).toBe(false);

    held.release();
    await edit;
    write(sb.workspace, "src/app.txt", "the new task's edit\n");
    await othersWork;
    expect((await baseline)?.kind).toBe("baseline");
    expect(read(sb.workspace, "src/app.txt")).toBe("the new task's edit\n");
    await other.stop();
    await manager.stop();
  });

  it("the restore asks again once it holds the lock, and is refused before a file is touched", async () => {
    const sb = makeSandbox();
    const conversation = new RunningTasks(path.join(sb.base, "conversations"), {
      t1: [sb.workspace],
      t2: [sb.workspace],
    });
    const manager = makeManager(sb, { conversation });
    const task = { id: "t1", workspaceRoots: [sb.workspace] };
    write(sb.workspace, "a.txt", "before\n");
    const base = (await manager.ensureBaseline(task))!;
    await manager.beforeEdit(task, ["a.txt"]);
    write(sb.workspace, "a.txt", "by task 1\n");
    await manager.saveTurn(task, { editedPaths: ["a.txt"] });

    conversation.startsAfterFirstLook = "t2";
    const err = (await manager.restore("t1", base.id, "files").catch((e: unknown) => e)) as DlineError;
    expect(err).toBeInstanceOf(DlineError);
    expect(err.code).toBe("failed_precondition");
    expect(err.message).toMatch(/^Another task is running in this workspace/);
    expect(read(sb.workspace, "a.txt")).toBe("by task 1\n");
    await manager.stop();
  });
});
