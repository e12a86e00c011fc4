/**
 * A file restore waits for the other tasks of its workspace: while one runs or waits for an
 * answer (here in another sidecar, as in another editor window), restoring files would
 * overwrite what it is editing, so the restore is refused, naming it, and changes nothing.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { CheckpointKind, RestoreMode } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { AskKind, TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { setAutoApproval } from "../runtime/harness.js";
import { openWindows, readIn, watch } from "./follow-helpers.js";

const scope = scopedSidecars();
const complete = (result: string) => ({ toolCalls: [{ name: "attempt_completion", input: { result } }] });

describe("a file restore while another task of the workspace runs", () => {
  it("is refused, naming that task, until it ends; a restore of the conversation alone goes on", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 2, [
      { toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "from the first task\n" } }] },
      complete("Wrote notes."),
      { toolCalls: [{ name: "execute_command", input: { command: "echo busy", requires_approval: true } }] },
      complete("Ran it."),
    ]);
    const [here, other] = sidecars;
    await setAutoApproval(here.clients, { editFiles: true, readFiles: true });
    const first = await here.clients.tasks.newTask({ workspaceRoot: workspace, text: "Write notes", profileId });
    await watch(here.clients, first.taskId).status(TaskStatus.COMPLETED);
    expect(readIn(workspace, "notes.txt")).toBe("from the first task\n");

    // The second task waits for an approval in the other window.
    const second = await other.clients.tasks.newTask({ workspaceRoot: workspace, text: "Run it", profileId });
    const running = watch(other.clients, second.taskId);
    const ask = await running.ask(AskKind.COMMAND_APPROVAL);

    const { checkpoints } = await here.clients.checkpoints.listCheckpoints({ taskId: first.taskId });
    const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE)!;
    const restore = (mode: RestoreMode) =>
      here.clients.checkpoints.restore({ taskId: first.taskId, checkpointId: baseline.id, mode });
    for (const mode of [RestoreMode.FILES, RestoreMode.FILES_AND_TASK]) {
      const err = await restore(mode).then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
      expect(err?.code).toBe(Code.FailedPrecondition);
      // Named by its title, as the history lists it: never by its id.
      expect(err?.rawMessage).toContain('Task "Run it" is running in this workspace');
      expect(err?.rawMessage).not.toContain(second.taskId);
      expect(readIn(workspace, "notes.txt")).toBe("from the first task\n");
    }
    expect(await restore(RestoreMode.TASK)).toMatchObject({ conversationRestored: true, filesRestored: false });

    await other.clients.tasks.respond({ taskId: second.taskId, askId: ask.askId, approve: true, text: "" });
    await running.status(TaskStatus.COMPLETED);
    expect(await restore(RestoreMode.FILES)).toMatchObject({ filesRestored: true, deletedPaths: ["notes.txt"] });
    expect(readIn(workspace, "notes.txt")).toBeUndefined();
    await running.stop();
  });

  it("a task whose sidecar died (its row still says waiting) does not hold the restore", async () => {
    const { sidecars, workspace, profileId } = await openWindows(scope, 2, [
      { toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "written\n" } }] },
      complete("Wrote notes."),
      { toolCalls: [{ name: "execute_command", input: { command: "echo busy", requires_approval: true } }] },
    ]);
    const [here, other] = sidecars;
    await setAutoApproval(here.clients, { editFiles: true, readFiles: true });
    const first = await here.clients.tasks.newTask({ workspaceRoot: workspace, text: "Write notes", profileId });
    await watch(here.clients, first.taskId).status(TaskStatus.COMPLETED);
    const second = await other.clients.tasks.newTask({ workspaceRoot: workspace, text: "Run it", profileId });
    await watch(other.clients, second.taskId).ask(AskKind.COMMAND_APPROVAL);
    process.kill(other.process.handshake.pid, "SIGKILL");
    // Dead, not dying: until the kernel has torn it down, its claim is a live process's claim.
    await other.process.exited;

    const { checkpoints } = await here.clients.checkpoints.listCheckpoints({ taskId: first.taskId });
    const baseline = checkpoints.find((c) => c.kind === CheckpointKind.BASELINE)!;
    const outcome = await here.clients.checkpoints.restore({
      taskId: first.taskId,
      checkpointId: baseline.id,
      mode: RestoreMode.FILES,
    });
    expect(outcome).toMatchObject({ filesRestored: true, deletedPaths: ["notes.txt"] });
  });
});
