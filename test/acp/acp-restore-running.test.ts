/**
 * A restore asked over ACP of a task another window runs (a Connect sidecar here, as an editor's)
 * is made by that window, as the Connect service's is: the run is stopped first, nothing its
 * command writes comes back, and the answer says the run was stopped. Found in a bug hunt: the
 * ACP face restored in its own process, under the live run (the command wrote on), and its
 * Files & Task restore then refused the conversation after the files were restored.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CheckpointKind } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { makeTestRoots, startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import { configureModel, makeWorkspace, setAutoApproval } from "../runtime/harness.js";
import { watch } from "../tasks/follow-helpers.js";
import { startAcpAgent, waitFor, type RunningAcpAgent } from "./acp-harness.js";

const TICKING =
  "end=$(( $(date +%s) + 60 )); while [ $(date +%s) -lt $end ]; do echo tick >> ticks.txt; sleep 0.005; done";
const stops: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
});

describe("an ACP restore of a task another window runs", () => {
  for (const mode of ["files", "files_and_task"] as const) {
    it(`(${mode}) is made by that window: its run stops first, and nothing the command writes comes back`, async () => {
      const roots = makeTestRoots("dline-acp-restore-");
      const workspace = makeWorkspace(roots.base);
      const window: RunningSidecar = await startSidecar({ roots });
      stops.push(() => window.stop());
      const { server, profileId } = await configureModel(window.clients, "openai", {
        turns: [
          { toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "from the task\n" } }] },
          { toolCalls: [{ name: "execute_command", input: { command: TICKING, requires_approval: false } }] },
        ],
      });
      stops.push(() => server.stop());
      await setAutoApproval(window.clients, {
        editFiles: true,
        readFiles: true,
        executeSafeCommands: true,
        executeAllCommands: true,
      });
      const { taskId } = await window.clients.tasks.newTask({ workspaceRoot: workspace, text: "Tick", profileId });
      const stream = watch(window.clients, taskId);
      await waitFor(() => fs.existsSync(path.join(workspace, "ticks.txt")));
      const baseline = (await window.clients.checkpoints.listCheckpoints({ taskId })).checkpoints.find(
        (c) => c.kind === CheckpointKind.BASELINE,
      )!;

      const acp: RunningAcpAgent = await startAcpAgent(roots);
      stops.push(() => acp.stop());
      const restored = await acp.agent.request<{ filesRestored: boolean; deletedPaths: string[]; runStopped: boolean }>(
        "_dline/checkpoints/restore",
        { sessionId: taskId, checkpointId: baseline.id, mode },
      );
      expect(restored).toMatchObject({ filesRestored: true, runStopped: true });
      expect(restored.deletedPaths.sort()).toEqual(["notes.txt", "ticks.txt"]);
      for (let i = 0; i < 6; i++) {
        expect(fs.existsSync(path.join(workspace, "ticks.txt"))).toBe(false);
        await new Promise((r) => setTimeout(r, 50));
      }
      await stream.status(TaskStatus.INTERRUPTED);
      await stream.stop();
    });
  }
});
