/**
 * A full disk and the way out of it: deleting tasks (and their checkpoints) to make room. The
 * task index could not even open on a full disk (SQLite needs room for its `-shm` and WAL), so a
 * new window listed nothing and deleted nothing: "The disk is full." everywhere. A small reserve
 * kept beside the task folders is given back when the disk is nearly full, so the tasks are
 * listed and deleted, and the deletion frees room. Real sidecars, roots on a small tmpfs
 * (mounted for the test: this needs root; the test says why it is skipped otherwise).
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AskKind, TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { fillDisk, freeBytes, mountSmallTmpfs, rootsOn } from "../helpers/small-disk.js";
import { startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import { configureModel, followUntilDone, makeWorkspace } from "../runtime/harness.js";
import type { ModelServerProcess } from "../model-server/spawn.js";
import { watch, writeThenComplete } from "./follow-helpers.js";

const mount = mountSmallTmpfs(40);
const mounted = "dir" in mount ? mount : undefined;
const secondMount = mounted ? mountSmallTmpfs(40) : mount;
const sidecars: RunningSidecar[] = [];
const servers: ModelServerProcess[] = [];

afterAll(async () => {
  await Promise.all(sidecars.map((s) => s.stop()));
  await Promise.all(servers.map((s) => s.stop()));
  mounted?.unmount();
  if ("dir" in secondMount) secondMount.unmount();
}, 60_000);

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  expect(check()).toBe(true);
}

describe.skipIf(!mounted)(
  `tasks are listed and deleted on a full disk ${mounted ? "" : `(skipped: ${"reason" in mount ? mount.reason : ""})`}`,
  () => {
    it("a window started on a full disk lists the tasks, deletes one, and the deletion frees room", async () => {
      const roots = rootsOn(mounted!.dir);
      const first = await startSidecar({ roots });
      sidecars.push(first);
      const model = await configureModel(first.clients, "openai", { turns: writeThenComplete(), loop: true });
      servers.push(model.server);
      const workspace = makeWorkspace(fs.mkdtempSync(path.join(os.tmpdir(), "dline-diskfull-delete-ws-")));
      const ids: string[] = [];
      for (const text of ["Write notes.txt", "Write notes.txt again"]) {
        const { taskId } = await first.clients.tasks.newTask({
          workspaceRoot: workspace,
          text,
          profileId: model.profileId,
        });
        const task = watch(first.clients, taskId);
        const ask = await task.ask(AskKind.TOOL_APPROVAL);
        await first.clients.tasks.respond({ taskId, askId: ask.askId, approve: true, text: "" });
        await task.status(TaskStatus.COMPLETED);
        await task.stop();
        ids.push(taskId);
      }
      // The reserve is made once the index is open and the disk has room to spare.
      await waitFor(() => fs.existsSync(path.join(roots.docsDir, "tasks", ".space-reserve")));
      await first.stop();

      const filler = fillDisk(mounted!.dir);
      expect(freeBytes(mounted!.dir)).toBe(0);
      const window = await startSidecar({ roots });
      sidecars.push(window);
      // Before, both calls failed with resource_exhausted "The disk is full.".
      const listed = await window.clients.history.listTasks({});
      expect(listed.tasks.map((t) => t.id).sort()).toEqual([...ids].sort());
      const deleted = await window.clients.tasks.deleteTasks({ taskIds: [ids[0]!] });
      expect(deleted.deletedTaskIds).toEqual([ids[0]!]);
      expect(fs.existsSync(path.join(roots.docsDir, "tasks", ids[0]!))).toBe(false);
      expect((await window.clients.history.listTasks({})).tasks.map((t) => t.id)).toEqual([ids[1]]);
      // The deleted task's files are room again; the reserve is not taken back from so little.
      expect(freeBytes(mounted!.dir)).toBeGreaterThan(0);
      expect(fs.existsSync(path.join(roots.docsDir, "tasks", ".space-reserve"))).toBe(false);

      fs.rmSync(filler);
      await window.stop();
      // With room again, the next window keeps a reserve again, and the other task is intact.
      const later = await startSidecar({ roots });
      sidecars.push(later);
      expect((await later.clients.history.listTasks({})).tasks.map((t) => t.id)).toEqual([ids[1]]);
      await waitFor(() => fs.existsSync(path.join(roots.docsDir, "tasks", ".space-reserve")));
    });

    it("deleting tasks on a full disk frees their checkpoints' objects, though git's repack has no room", async () => {
      const dir = "dir" in secondMount ? secondMount.dir : "";
      const roots = rootsOn(dir);
      const first = await startSidecar({ roots });
      sidecars.push(first);
      const command = (line: string) => ({
        toolCalls: [{ name: "execute_command", input: { command: line, requires_approval: false } }],
      });
      const complete = { toolCalls: [{ name: "attempt_completion", input: { result: "Done." } }] };
      const model = await configureModel(first.clients, "openai", {
        turns: [
          command("echo kept > kept.txt"),
          complete,
          command("head -c 4000000 /dev/urandom > big.txt"),
          complete,
          command("rm big.txt"),
          complete,
        ],
      });
      servers.push(model.server);
      // What every checkpoint keeps: more than the room a full disk gives back (the reserve).
      const workspace = makeWorkspace(fs.mkdtempSync(path.join(os.tmpdir(), "dline-diskfull-gc-ws-")), {
        "data.txt": randomBytes(3_000_000).toString("base64"),
      });
      const ids: string[] = [];
      for (const text of ["Keep a note", "Make a big file", "Remove the big file"]) {
        const { taskId } = await first.clients.tasks.newTask({
          workspaceRoot: workspace,
          text,
          profileId: model.profileId,
        });
        const events = await followUntilDone(first.clients, taskId, async (e) => {
          if (e.event.case === "ask")
            await first.clients.tasks.respond({ taskId, askId: e.event.value.askId, approve: true, text: "" });
        });
        const status = events.findLast((e) => e.event.case === "statusChanged");
        expect(status?.event.case === "statusChanged" && status.event.value.status).toBe(TaskStatus.COMPLETED);
        ids.push(taskId);
      }
      await waitFor(() => fs.existsSync(path.join(roots.docsDir, "tasks", ".space-reserve")));
      await first.stop();

      fillDisk(dir);
      const window = await startSidecar({ roots });
      sidecars.push(window);
      const deleted = await window.clients.tasks.deleteTasks({ taskIds: [ids[1]!, ids[2]!] });
      expect(deleted.deletedTaskIds.sort()).toEqual([ids[1]!, ids[2]!].sort());
      // The big file's copy, which only those tasks' checkpoints held, is room again. Before, gc
      // failed for want of room to write its new pack, and nothing of the checkpoints was freed.
      expect(freeBytes(dir)).toBeGreaterThan(4_000_000);
      expect((await window.clients.history.listTasks({})).tasks.map((t) => t.id)).toEqual([ids[0]]);
      // The kept task's checkpoints are whole: its baseline compares with the workspace.
      const { checkpoints } = await window.clients.checkpoints.listCheckpoints({ taskId: ids[0]! });
      expect(checkpoints.length).toBeGreaterThan(0);
      await window.clients.checkpoints.compare({ taskId: ids[0]!, checkpointId: checkpoints[0]!.id });
    });
  },
);
