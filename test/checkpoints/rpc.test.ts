import * as fs from "node:fs";
import * as path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import {
  CheckpointKind,
  CheckpointState,
  FileStatus,
  RestoreMode,
  SkipReason,
} from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { InstanceLayout } from "../../core/src/storage/instance-layout.js";
import { CheckpointManager } from "../../core/src/checkpoints/index.js";
import { silentLogger } from "../../core/src/logging/logger.js";
import { makeTestRoots, startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import { read, write } from "./helpers.js";
import { nth } from "../helpers/items.js";

const running: RunningSidecar[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function codeOf(p: Promise<unknown>): Promise<Code | "ok"> {
  try {
    await p;
    return "ok";
  } catch (err) {
    return ConnectError.from(err).code;
  }
}

describe("CheckpointService over the real sidecar", () => {
  it("refuses a workspace root that is no folder for the status, Retry and Disable (found with the Kotlin client)", async () => {
    const roots = makeTestRoots("dline-cp-rpc-root-");
    const file = path.join(roots.home, "a-file.txt");
    write(roots.home, "a-file.txt", "not a folder\n");
    const s = await startSidecar({ roots });
    running.push(s);
    const cp = s.clients.checkpoints;
    // Each answered "Checkpoints are ready." before; Retry then resolved a relative path against
    // the sidecar's own folder, and said git's own words for a file.
    for (const workspaceRoot of [path.join(roots.home, "no-such-folder"), "relative/dir", file]) {
      // One call at a time: a rejection made before it is awaited would be reported unhandled.
      const calls = [
        () => cp.getStatus({ workspaceRoot }),
        () => cp.retry({ workspaceRoot }),
        () => cp.disable({ workspaceRoot }),
      ];
      for (const call of calls) {
        const err = await call().then(
          () => undefined,
          (e: unknown) => ConnectError.from(e),
        );
        expect(err?.code, workspaceRoot).toBe(Code.InvalidArgument);
        expect(err?.rawMessage).toContain(workspaceRoot);
      }
    }
    expect(fs.readFileSync(file, "utf8")).toBe("not a folder\n");
  });

  it("reports status, lists, compares and restores checkpoints another process saved", async () => {
    const roots = makeTestRoots("dline-cp-rpc-");
    const workspace = path.join(roots.home, "project");
    write(workspace, "src/a.ts", "one\n");
    write(workspace, "build/out.js", "built");
    // This test process saves checkpoints as the task runtime will, over the same roots.
    const manager = new CheckpointManager({
      layout: new InstanceLayout({
        dataRoot: path.join(roots.dlineDir, "data"),
        homeRoot: roots.homeDir,
        documentsRoot: roots.docsDir,
      }),
      env: roots.env,
      homeDir: roots.home,
      logger: silentLogger(),
    });
    const task = { id: "task-1", workspaceRoots: [workspace] };
    const base = (await manager.ensureBaseline(task))!;
    write(workspace, "src/a.ts", "two\n");
    write(workspace, "src/b.ts", "new\n");
    await manager.saveTurn(task, { editedPaths: ["src/a.ts", "src/b.ts"] });

    const s = await startSidecar({ roots });
    running.push(s);
    const cp = s.clients.checkpoints;

    const home = await cp.getStatus({ workspaceRoot: roots.home });
    expect(home.state).toBe(CheckpointState.UNAVAILABLE);
    expect(home.message).toBe("Cannot use checkpoints in home directory");
    const status = await cp.getStatus({ taskId: "task-1" });
    expect(status.state).toBe(CheckpointState.READY);
    expect(status.skipped.map((x) => [x.path, x.reason])).toEqual([["build", SkipReason.EXCLUDED_TYPE]]);

    const list = await cp.listCheckpoints({ taskId: "task-1" });
    expect(list.checkpoints.map((c) => c.kind)).toEqual([CheckpointKind.BASELINE, CheckpointKind.TURN]);
    expect(nth(list.checkpoints, 0, "checkpoint").id).toBe(base.id);
    expect(nth(list.checkpoints, 1, "checkpoint").editedPaths).toEqual(["src/a.ts", "src/b.ts"]);

    const compare = await cp.compare({ taskId: "task-1", checkpointId: base.id });
    expect(compare.files.map((f) => [f.path, f.status, f.before, f.after])).toEqual([
      ["src/a.ts", FileStatus.MODIFIED, "one\n", "two\n"],
      ["src/b.ts", FileStatus.ADDED, "", "new\n"],
    ]);

    // Files of a task that does not exist (deleted) are never restored; task-1 gets its folder,
    // as the task runtime makes it before the task's first checkpoint.
    expect(await codeOf(cp.restore({ taskId: "task-1", checkpointId: base.id, mode: RestoreMode.FILES }))).toBe(
      Code.NotFound,
    );
    expect(read(workspace, "src/b.ts")).toBe("new\n");
    fs.mkdirSync(path.join(roots.docsDir, "tasks", "task-1"), { recursive: true });
    const restored = await cp.restore({ taskId: "task-1", checkpointId: base.id, mode: RestoreMode.FILES });
    expect(restored.filesRestored).toBe(true);
    expect(restored.deletedPaths).toEqual(["src/b.ts"]);
    expect(restored.undoCheckpointId).toMatch(/^[0-9a-f]{40}$/);
    expect(read(workspace, "src/a.ts")).toBe("one\n");
    const after = await cp.listCheckpoints({ taskId: "task-1" });
    expect(nth(after.checkpoints, 0, "checkpoint").restored).toBe(true);
    expect(nth(after.checkpoints, 2, "checkpoint").undoAvailable).toBe(true);

    // The conversation side belongs to the task store: this task is unknown to it (not_found),
    // or no task store is wired into the sidecar (failed_precondition). Files stay as they are.
    expect([Code.NotFound, Code.FailedPrecondition]).toContain(
      await codeOf(cp.restore({ taskId: "task-1", checkpointId: base.id, mode: RestoreMode.TASK })),
    );
    expect(read(workspace, "src/a.ts")).toBe("one\n");
    expect(await codeOf(cp.restore({ taskId: "task-1", checkpointId: base.id, mode: RestoreMode.UNSPECIFIED }))).toBe(
      Code.InvalidArgument,
    );
    expect(await codeOf(cp.listCheckpoints({ taskId: "no-such-task" }))).toBe(Code.NotFound);
    expect(await codeOf(cp.listCheckpoints({ taskId: "../evil" }))).toBe(Code.InvalidArgument);
    expect(await codeOf(cp.viewChanges({ taskId: "task-1" }))).toBe(Code.FailedPrecondition);
    expect(await codeOf(cp.compare({ taskId: "task-1", checkpointId: "f".repeat(40) }))).toBe(Code.NotFound);

    const disabled = await cp.disable({ workspaceRoot: workspace });
    expect(disabled.status?.state).toBe(CheckpointState.DISABLED);
  });

  it("damage: a bad HEAD is repaired by a listing; a checkpoint whose commit is lost is data_loss, the others work", async () => {
    const roots = makeTestRoots("dline-cp-rpc-damage-");
    const workspace = path.join(roots.home, "project");
    write(workspace, "src/a.ts", "one\n");
    const layout = new InstanceLayout({
      dataRoot: path.join(roots.dlineDir, "data"),
      homeRoot: roots.homeDir,
      documentsRoot: roots.docsDir,
    });
    const manager = new CheckpointManager({ layout, env: roots.env, homeDir: roots.home, logger: silentLogger() });
    const task = { id: "task-1", workspaceRoots: [workspace] };
    const base = (await manager.ensureBaseline(task))!;
    write(workspace, "src/a.ts", "two\n");
    const turn = (await manager.saveTurn(task, { editedPaths: ["src/a.ts"] }))!;
    await manager.idle();
    await manager.stop();
    const gitDir = path.join(layout.checkpointRepoDir(workspace), ".git");
    fs.writeFileSync(path.join(gitDir, "HEAD"), "garbage\n");
    // The turn's commit is written loose or in a pack of its own (with its tree): either goes.
    const loose = path.join(gitDir, "objects", turn.id.slice(0, 2), turn.id.slice(2));
    if (fs.existsSync(loose)) fs.rmSync(loose);
    else {
      const packDir = path.join(gitDir, "objects", "pack");
      const newest = fs
        .readdirSync(packDir)
        .filter((n) => n.endsWith(".pack"))
        .map((n) => path.join(packDir, n))
        .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0]!;
      fs.rmSync(newest);
      fs.rmSync(newest.replace(/\.pack$/, ".idx"));
    }

    const s = await startSidecar({ roots });
    running.push(s);
    const cp = s.clients.checkpoints;
    const list = await cp.listCheckpoints({ taskId: "task-1" });
    expect(list.checkpoints.map((c) => c.id)).toEqual([base.id]);
    expect(fs.readdirSync(path.dirname(gitDir)).filter((n) => n.startsWith(".git.corrupt-"))).toEqual([]);
    const status = await cp.getStatus({ taskId: "task-1" });
    expect(status.message).toMatch(/HEAD was damaged and has been repaired/);

    const lost = await cp.compare({ taskId: "task-1", checkpointId: turn.id }).then(
      () => undefined,
      (err: unknown) => ConnectError.from(err),
    );
    expect(lost?.code).toBe(Code.DataLoss);
    expect(lost?.rawMessage).toContain(`Checkpoint ${turn.id.slice(0, 8)} of task task-1 cannot be read`);
    expect(await codeOf(cp.restore({ taskId: "task-1", checkpointId: turn.id, mode: RestoreMode.FILES }))).toBe(
      Code.DataLoss,
    );
    const compare = await cp.compare({ taskId: "task-1", checkpointId: base.id });
    expect(compare.files.map((f) => [f.path, f.before, f.after])).toEqual([["src/a.ts", "one\n", "two\n"]]);
  });

  it("ViewChanges shows the completion a card names (checkpoint_id or message_id), the latest when none", async () => {
    const roots = makeTestRoots("dline-cp-rpc-view-");
    const workspace = path.join(roots.home, "project");
    write(workspace, "README.md", "readme\n");
    const manager = new CheckpointManager({
      layout: new InstanceLayout({
        dataRoot: path.join(roots.dlineDir, "data"),
        homeRoot: roots.homeDir,
        documentsRoot: roots.docsDir,
      }),
      env: roots.env,
      homeDir: roots.home,
      logger: silentLogger(),
    });
    const task = { id: "task-1", workspaceRoots: [workspace] };
    const base = (await manager.ensureBaseline(task))!;
    write(workspace, "a.txt", "one\n");
    const turn = (await manager.saveTurn(task, { editedPaths: ["a.txt"] }))!;
    const first = (await manager.saveCompletion(task, { messageId: "completion-1" }))!;
    write(workspace, "a.txt", "two\n");
    write(workspace, "b.txt", "new\n");
    await manager.saveTurn(task, { editedPaths: ["a.txt", "b.txt"] });
    const second = (await manager.saveCompletion(task, { messageId: "completion-2" }))!;
    await manager.idle();
    await manager.stop();

    const s = await startSidecar({ roots });
    running.push(s);
    const cp = s.clients.checkpoints;
    const shown = (r: { files: { path: string; status: FileStatus; before: string; after: string }[] }) =>
      r.files.map((f) => [f.path, f.status, f.before, f.after]);
    const firstChanges = [["a.txt", FileStatus.ADDED, "", "one\n"]];
    const secondChanges = [
      ["a.txt", FileStatus.MODIFIED, "one\n", "two\n"],
      ["b.txt", FileStatus.ADDED, "", "new\n"],
    ];

    // Before: the first completion's card showed the second's changes (the request had no field for it).
    const byId = await cp.viewChanges({ taskId: "task-1", checkpointId: first.id });
    expect(shown(byId)).toEqual(firstChanges);
    expect([byId.fromCheckpointId, byId.toCheckpointId]).toEqual([base.id, first.id]);
    expect(shown(await cp.viewChanges({ taskId: "task-1", messageId: "completion-1" }))).toEqual(firstChanges);
    const latest = await cp.viewChanges({ taskId: "task-1" });
    expect(shown(latest)).toEqual(secondChanges);
    expect([latest.fromCheckpointId, latest.toCheckpointId]).toEqual([first.id, second.id]);
    expect(shown(await cp.viewChanges({ taskId: "task-1", checkpointId: second.id }))).toEqual(secondChanges);

    const notCompletion = await cp.viewChanges({ taskId: "task-1", checkpointId: turn.id }).then(
      () => undefined,
      (err: unknown) => ConnectError.from(err),
    );
    expect(notCompletion?.code).toBe(Code.InvalidArgument);
    expect(notCompletion?.rawMessage).toContain("not a completion");
    expect(await codeOf(cp.viewChanges({ taskId: "task-1", checkpointId: "f".repeat(40) }))).toBe(Code.NotFound);
    expect(await codeOf(cp.viewChanges({ taskId: "task-1", messageId: "no-such-message" }))).toBe(Code.NotFound);
    expect(await codeOf(cp.viewChanges({ taskId: "task-1", checkpointId: second.id, messageId: "completion-1" }))).toBe(
      Code.InvalidArgument,
    );
  });
});
