/**
 * A turn that calls a tool outside the read-only list saves a checkpoint even when the call never
 * ran (checkpoints.md: "whenever a turn contains a tool outside the read-only list"): an edit
 * whose SEARCH block matched nothing, a write the person denied. Before, such a turn had no
 * checkpoint (seen in Neovim: one marker fewer than the turns that edited). The checkpoint is the
 * newest snapshot reused, with no edited path. Real sidecar process, real git, scripted model server.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { CheckpointKind } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { TaskStatus, ToolCallStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { makeManager, makeSandbox, write } from "./helpers.js";
import { setAutoApproval } from "../runtime/harness.js";
import { openWindows, watch } from "../tasks/follow-helpers.js";

const scope = scopedSidecars();

describe("a turn whose call of an editing tool did not run", () => {
  it("saves its checkpoint (the snapshot reused): a SEARCH that matched nothing, a denied write", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 1, [
      {
        toolCalls: [
          {
            name: "replace_in_file",
            input: { path: "src/app.txt", diff: "------- SEARCH\nnot in the file\n=======\nx\n+++++++ REPLACE" },
          },
        ],
      },
      { toolCalls: [{ name: "write_to_file", input: { path: "src/new.txt", content: "made by the task\n" } }] },
      { toolCalls: [{ name: "attempt_completion", input: { result: "Nothing changed." } }] },
    ]);
    const [window] = sidecars;
    // Edits are asked: the write is denied at its question.
    await setAutoApproval(window.clients, { readFiles: true, editFiles: false });
    const { taskId } = await window.clients.tasks.newTask({ workspaceRoot: workspace, text: "Edit", profileId });
    const events = watch(window.clients, taskId);
    const ask = await events.ask();
    await window.clients.tasks.respond({ taskId, askId: ask.askId, approve: false, text: "" });
    await events.status(TaskStatus.COMPLETED);
    // The saves run beside the next model request: each turn's checkpoint is told once saved,
    // the baseline once the saves under way are (CheckpointPort.baseline); the completion's last.
    const told = events.events.flatMap((e) => (e.event.case === "checkpointSaved" ? [e.event.value.kind] : []));
    expect([...told].sort()).toEqual([
      "CHECKPOINT_KIND_BASELINE",
      "CHECKPOINT_KIND_COMPLETION",
      "CHECKPOINT_KIND_TURN",
      "CHECKPOINT_KIND_TURN",
    ]);
    expect(told.at(-1)).toBe("CHECKPOINT_KIND_COMPLETION");
    const tools = events.events.flatMap((e) =>
      e.event.case === "toolFinished" ? [ToolCallStatus[e.event.value.status]] : [],
    );
    expect(tools).toEqual(["FAILED", "DENIED"]);
    await events.stop();

    const { checkpoints } = await window.clients.checkpoints.listCheckpoints({ taskId });
    const turns = checkpoints.filter((c) => c.kind === CheckpointKind.TURN);
    expect(turns).toHaveLength(2);
    for (const turn of turns) {
      expect(turn.hasFiles).toBe(true);
      expect(turn.reused).toBe(true);
      expect(turn.editedPaths).toEqual([]);
      expect((await window.clients.checkpoints.compare({ taskId, checkpointId: turn.id })).files).toEqual([]);
    }
    expect(fs.readFileSync(path.join(workspace, "src/app.txt"), "utf8")).toBe("hello\n");
    expect(fs.existsSync(path.join(workspace, "src/new.txt"))).toBe(false);
  });

  it("reuses the snapshot without a git status when the task's scan and saves vouch for it, and scans after another tool", async () => {
    const sb = makeSandbox();
    // git itself, each of its runs' arguments logged on the way (the checkpoints find git on PATH).
    const bin = path.join(sb.base, "bin");
    const log = path.join(sb.base, "git-runs.log");
    const realGit = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, "git"), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${realGit}' "$@"\n`, {
      mode: 0o755,
    });
    sb.env.PATH = `${bin}:${sb.env.PATH}`;
    const ws = sb.workspace;
    write(ws, "a.txt", "a\n");
    const manager = makeManager(sb);
    const task = { id: "t1", workspaceRoots: [ws] };
    // As the runtime does when the task starts: the baseline, no tool starting.
    const baseline = (await manager.ensureBaseline(task, "", { toolStarting: false }))!;
    await manager.idle();
    fs.rmSync(log, { force: true });
    const statuses = () =>
      (fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "").split("\n").filter((l) => / status /.test(` ${l} `));

    const reused = (await manager.saveTurn(task, { nothingRan: true }))!;
    expect(reused.reused).toBe(true);
    expect(reused.tree).toBe(baseline.tree);
    expect(statuses()).toEqual([]);

    // A command (or a hook) started since: what it may have changed is only known by a scan.
    await manager.ensureBaseline(task);
    write(ws, "b.txt", "made by the command\n");
    const scanned = (await manager.saveTurn(task, { nothingRan: true }))!;
    expect(statuses()).toHaveLength(1);
    expect(scanned.reused).toBe(false);
    expect((await manager.compare("t1", baseline.id)).files.map((f) => f.path)).toContain("b.txt");
  });
});
