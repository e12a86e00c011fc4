/**
 * A file the person is editing is never written behind their back: the client reports which
 * files its editor has modified and unsaved (EditorState.unsaved_files, with a message or at any
 * time through UpdateEditorState), and the core refuses edits to them, before asking and after
 * the approval, with a reason the model reads. Through the real sidecar and the scripted model.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { ToolCallStatus, type Ask, type TaskEvent } from "../../core/src/gen/dline/v1/task_pb.js";
import type { ScriptTurn } from "../model-server/script.js";
import { startSidecar } from "../helpers/sidecar.js";
import { configureModel, followUntilDone, makeWorkspace, setAutoApproval } from "./harness.js";
import { recorded } from "../model-server/script.js";
import { nth, lastOf } from "../helpers/items.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

async function setup(turns: ScriptTurn[]) {
  const sidecar = await startSidecar();
  cleanups.push(() => sidecar.stop());
  const { server, profileId } = await configureModel(sidecar.clients, "openai", { turns });
  cleanups.push(() => server.stop());
  const workspace = makeWorkspace(sidecar.roots.base, { "src/app.txt": "hello\n" });
  return { server, profileId, workspace, clients: sidecar.clients };
}

const write = (content: string): ScriptTurn => ({
  toolCalls: [{ name: "write_to_file", input: { path: "src/app.txt", content } }],
});
const finished = (events: TaskEvent[]) =>
  events.flatMap((e) => (e.event.case === "toolFinished" ? [e.event.value] : []));
const asks = (events: TaskEvent[]) => events.flatMap((e) => (e.event.case === "ask" ? [e.event.value] : []));

describe("edits to files unsaved in the editor", () => {
  it("an edit of a file the editor reports as unsaved is refused without asking, the model reads why, and the file is untouched", async () => {
    const { clients, server, profileId, workspace } = await setup([
      write("agent text\n"),
      { text: "I will wait for you to save it." },
    ]);
    await setAutoApproval(clients, { editFiles: true });
    const { taskId } = await clients.tasks.newTask({
      workspaceRoot: workspace,
      text: "rewrite app.txt",
      profileId,
      editor: { openFiles: ["src/app.txt"], unsavedFiles: [path.join(workspace, "src/app.txt")] },
    });
    const events = await followUntilDone(clients, taskId);
    expect(asks(events)).toHaveLength(0);
    expect(fs.readFileSync(path.join(workspace, "src/app.txt"), "utf8")).toBe("hello\n");
    const end = nth(finished(events), 0, "finished tool call");
    expect(end.status).toBe(ToolCallStatus.FAILED);
    expect(end.result).toContain('"src/app.txt" has unsaved changes in the user\'s editor');
    const row = (await clients.tasks.getTask({ taskId })).messages.find((m) => m.toolCall)!.toolCall!;
    expect(row.status).toBe(ToolCallStatus.FAILED);
    expect(row.reason).toContain("unsaved changes");
    // The person reads what happened, here and in a reopened task; what the model is told to do
    // next ("tell the user…") is the model's alone.
    expect(end.reason).not.toContain("tell the user");
    expect(row.reason).not.toContain("tell the user");
    expect(row.reason).toBe(end.reason);
    // The model's next request carries the refusal as the call's result.
    const requests = await server.requests();
    expect(JSON.stringify(recorded(requests, 1).body)).toContain("has unsaved changes in the user's editor");
  });

  it("a file that gets unsaved changes while its approval waits is not written after the approval; once saved, the next edit goes through", async () => {
    const { clients, profileId, workspace } = await setup([
      write("first try\n"),
      { text: "Please save app.txt first." },
      write("second try\n"),
      { toolCalls: [{ name: "attempt_completion", input: { result: "written" } }] },
    ]);
    const file = path.join(workspace, "src/app.txt");
    const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "rewrite app.txt", profileId });
    const first = await followUntilDone(clients, taskId, async (e) => {
      // The person starts typing in the file while the approval waits, then approves.
      await clients.tasks.updateEditorState({ taskId, editor: { unsavedFiles: ["src/app.txt"] } });
      await clients.tasks.respond({ taskId, askId: (e.event.value as Ask).askId, approve: true, text: "" });
    });
    const refused = nth(finished(first), 0, "finished tool call");
    expect(refused.status).toBe(ToolCallStatus.FAILED);
    expect(refused.result).toContain("unsaved changes");
    expect(fs.readFileSync(file, "utf8")).toBe("hello\n");
    // They save it (the editor reports no unsaved file) and say so.
    await clients.tasks.updateEditorState({ taskId, editor: { unsavedFiles: [] } });
    await clients.tasks.sendMessage({ taskId, text: "saved" });
    const second = await followUntilDone(
      clients,
      taskId,
      async (e) =>
        void (await clients.tasks.respond({ taskId, askId: (e.event.value as Ask).askId, approve: true, text: "" })),
      lastOf(first, "event").seq,
    );
    expect(finished(second).map((f) => f.status)).toEqual([ToolCallStatus.DONE]);
    expect(fs.readFileSync(file, "utf8")).toBe("second try\n");
  });

  it("reports for a task that does not exist are not_found", async () => {
    const { clients } = await setup([]);
    const err = await clients.tasks
      .updateEditorState({ taskId: "1700000000000-deadbeef", editor: { unsavedFiles: ["a.txt"] } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.NotFound);
  });
});
