/**
 * Compare says which of the changes since a checkpoint a file restore would change: with the
 * task's recorded edits, only those (a file someone else created since stays), so a
 * confirmation before the restore lists what it will really overwrite. Real sidecar, scripted
 * model server.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { CheckpointKind, RestoreMode } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { setAutoApproval } from "../runtime/harness.js";
import { openWindows, readIn, watch } from "./follow-helpers.js";

const scope = scopedSidecars();

describe("Compare's restore paths", () => {
  it("are the task's edits among the changes, and the restore changes exactly those", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 1, [
      { toolCalls: [{ name: "write_to_file", input: { path: "NOTES.md", content: "notes\n" } }] },
      { toolCalls: [{ name: "attempt_completion", input: { result: "Wrote notes." } }] },
    ]);
    const [editor] = sidecars;
    await setAutoApproval(editor.clients, { editFiles: true, readFiles: true });
    const { taskId } = await editor.clients.tasks.newTask({ workspaceRoot: workspace, text: "Write notes", profileId });
    await watch(editor.clients, taskId).status(TaskStatus.COMPLETED);
    // Made by someone else after the task (another task, the person).
    fs.writeFileSync(path.join(workspace, "cli-out.txt"), "from elsewhere\n");

    const { checkpoints } = await editor.clients.checkpoints.listCheckpoints({ taskId });
    const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE)!;
    const compared = await editor.clients.checkpoints.compare({ taskId, checkpointId: baseline.id });
    expect(compared.files.map((f) => f.path).sort()).toEqual(["NOTES.md", "cli-out.txt"]);
    expect(compared.restorePaths).toEqual(["NOTES.md"]);

    const restored = await editor.clients.checkpoints.restore({
      taskId,
      checkpointId: baseline.id,
      mode: RestoreMode.FILES,
    });
    expect([...restored.restoredPaths, ...restored.deletedPaths]).toEqual(compared.restorePaths);
    expect(readIn(workspace, "cli-out.txt")).toBe("from elsewhere\n");
  });
});
