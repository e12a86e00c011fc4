/**
 * A turn's checkpoint is told before the completion that follows it. The loop does not wait for
 * a turn's save (its next model request runs meanwhile), and the save after a command scans the
 * workspace: the completion's message came first, so the CLI printed "✔ Ran it." and then the
 * command's checkpoint under it, and an ACP client heard `_dline/checkpoint_saved` after the
 * answer (found by a bug hunt). Real sidecar process, real git, scripted model server.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { setAutoApproval } from "../runtime/harness.js";
import { openWindows, watch } from "../tasks/follow-helpers.js";

const scope = scopedSidecars();

describe("a command turn's checkpoint", () => {
  it("is told before the completion's message, though the save after the command scans a workspace of thousands of files", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 1, [
      { toolCalls: [{ name: "execute_command", input: { command: "echo r > r.txt", requires_approval: false } }] },
      { toolCalls: [{ name: "attempt_completion", input: { result: "Ran it." } }] },
    ]);
    const [window] = sidecars;
    await setAutoApproval(window.clients, { readFiles: true, executeSafeCommands: true, executeAllCommands: true });
    // Enough files that the scan after the command outlasts the model's next answer.
    for (let d = 0; d < 40; d++) {
      fs.mkdirSync(path.join(workspace, `src/d${d}`), { recursive: true });
      for (let f = 0; f < 100; f++)
        fs.writeFileSync(path.join(workspace, `src/d${d}/f${f}.ts`), `export const x = ${f};\n`);
    }
    const { taskId } = await window.clients.tasks.newTask({ workspaceRoot: workspace, text: "Run it", profileId });
    const events = watch(window.clients, taskId);
    await events.status(TaskStatus.COMPLETED);
    const order = events.events.flatMap((e) => {
      if (e.event.case === "checkpointSaved") return [e.event.value.kind];
      if (e.event.case === "messageAdded" && e.event.value.message?.kind === "completion")
        return ["completion message"];
      return [];
    });
    expect(order).toEqual([
      "CHECKPOINT_KIND_BASELINE",
      "CHECKPOINT_KIND_TURN",
      "completion message",
      "CHECKPOINT_KIND_COMPLETION",
    ]);
    await events.stop();
  });
});
