// Continuing imported tasks through the real sidecar: the model receives what Cline would have
// sent next, and a task's tools run in its workspace, never in the sidecar's current folder.
import * as fs from "node:fs";
import * as path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ErrorDetailSchema, ErrorReason } from "../../core/src/gen/dline/v1/errors_pb.js";
import { scopedSidecars } from "../helpers/scoped-sidecars.js";
import { configureModel, followUntilDone, makeWorkspace, setAutoApproval } from "../runtime/harness.js";
import {
  clineHomeData,
  contextTextEdit,
  readOnly,
  snapshotTree,
  vscodeGlobalStorage,
  writeLegacyTask,
  writeSession,
} from "./fixtures.js";
import { nth } from "../helpers/items.js";
import { recorded } from "../model-server/script.js";

const { testRoots, sidecar, onCleanup } = scopedSidecars();

async function rejection(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail");
}

describe("continuing an imported task", () => {
  it("continues an imported session: the model receives the imported conversation", async () => {
    const roots = testRoots("dline-import-continue-");
    const workspace = makeWorkspace(roots.base);
    writeSession(path.join(clineHomeData(roots.home), "sessions"), "1717000000000_ccccc", { cwd: workspace });
    const clineBefore = snapshotTree(roots.home);
    const s = await sidecar(roots);
    const { server } = await configureModel(s.clients, "anthropic", {
      turns: [{ text: "Continuing.", toolCalls: [{ name: "attempt_completion", input: { result: "continued" } }] }],
    });
    onCleanup(() => server.stop());
    const res = await s.clients.imports.importCline({ sourceKeys: ["session:1717000000000_ccccc"] });
    expect(nth(res.results, 0, "import result").outcome).toBe("imported");
    const taskId = nth(res.results, 0, "import result").taskId;
    await s.clients.tasks.sendMessage({ taskId, text: "Now add a licence" });
    await followUntilDone(s.clients, taskId);
    const requests = await server.requests();
    expect(requests).toHaveLength(1);
    const body = JSON.stringify(recorded(requests, 0).body);
    for (const expected of [
      "Add a README",
      "I will write the README.",
      "toolu_1",
      "README written.",
      "Now add a licence",
    ])
      expect(body).toContain(expected);
    // A display-only error was never sent to the model, and is not sent now.
    expect(body).not.toContain("Request failed, retrying");
    const task = await s.clients.tasks.getTask({ taskId });
    expect(task.messages.map((m) => m.text)).toContain("Now add a licence");
    expect(snapshotTree(roots.home)).toEqual(clineBefore);
  });

  it("asks for a workspace to continue a task that has none, and never runs its tools in the sidecar's current folder", async () => {
    const roots = testRoots("dline-import-no-workspace-");
    const workspace = makeWorkspace(roots.base);
    const sidecarCwd = path.join(roots.base, "sidecar-cwd");
    fs.mkdirSync(sidecarCwd);
    // Cline recorded no history item for it: no working folder.
    writeLegacyTask(vscodeGlobalStorage(roots.home, "Code"), "6001", { task: "Explain the parser", cwd: null });
    const clineBefore = snapshotTree(roots.home);
    // The sidecar runs in a folder of its own, which no tool may touch.
    const { clients } = await sidecar(roots, { cwd: sidecarCwd });
    const { server } = await configureModel(clients, "openai", {
      turns: [
        {
          text: "Noting it down.",
          toolCalls: [{ name: "write_to_file", input: { path: "NOTES.md", content: "lexer notes\n" } }],
        },
        { text: "Sure.", toolCalls: [{ name: "attempt_completion", input: { result: "explained" } }] },
      ],
    });
    onCleanup(() => server.stop());
    await setAutoApproval(clients, { readFiles: true, editFiles: true });
    const res = await clients.imports.importCline({ sourceKeys: ["legacy:6001"] });
    expect(nth(res.results, 0, "import result").outcome).toBe("imported");
    const taskId = nth(res.results, 0, "import result").taskId;
    expect((await clients.tasks.getTask({ taskId })).task?.workspaceRoot).toBe("");

    // Without a workspace: refused with failed_precondition, before any model call.
    const refused = await rejection(clients.tasks.sendMessage({ taskId, text: "And the lexer?" }));
    expect(refused.code).toBe(Code.FailedPrecondition);
    expect(refused.rawMessage).toMatch(/no workspace.*workspace_root/);
    // A reason clients act on: they offer a folder to continue in.
    expect(refused.findDetails(ErrorDetailSchema)[0]?.reason).toBe(ErrorReason.NO_WORKSPACE);
    const resumeRefused = await rejection(clients.tasks.resume({ taskId }));
    expect(resumeRefused.code).toBe(Code.FailedPrecondition);
    expect(resumeRefused.findDetails(ErrorDetailSchema)[0]?.reason).toBe(ErrorReason.NO_WORKSPACE);
    expect(await server.requests()).toHaveLength(0);
    // A folder that is not one is bad input.
    expect(
      (await rejection(clients.tasks.resume({ taskId, workspaceRoot: path.join(roots.base, "nowhere") }))).code,
    ).toBe(Code.InvalidArgument);

    // With one: the task continues there and keeps it.
    await clients.tasks.sendMessage({ taskId, text: "And the lexer?", workspaceRoot: workspace });
    await followUntilDone(clients, taskId);
    expect(fs.readFileSync(path.join(workspace, "NOTES.md"), "utf8")).toBe("lexer notes\n");
    expect(fs.readdirSync(sidecarCwd)).toEqual([]);
    const body = JSON.stringify(recorded(await server.requests(), 0).body);
    for (const expected of [
      "Explain the parser",
      "I will read the file.",
      "export const a = 1;",
      "The test passes now.",
      "And the lexer?",
    ])
      expect(body).toContain(expected);
    const row = (await clients.history.listTasks({ workspaceRoot: workspace })).tasks.map((t) => t.id);
    expect(row).toEqual([taskId]);
    // A task that has its folder keeps it: another one is refused.
    const other = makeWorkspace(path.join(roots.base, "other"));
    expect((await rejection(clients.tasks.resume({ taskId, workspaceRoot: other }))).code).toBe(Code.InvalidArgument);
    expect(snapshotTree(roots.home)).toEqual(clineBefore);
  });

  it("asks for a workspace when the recorded folder is not on this machine", async () => {
    const roots = testRoots("dline-import-foreign-workspace-");
    writeLegacyTask(clineHomeData(roots.home), "6101", { task: "From my laptop", cwd: "/Users/someone/projects/app" });
    const s = await sidecar(roots);
    const res = await readOnly(roots.home, () => s.clients.imports.importCline({ all: true }));
    const taskId = nth(res.results, 0, "import result").taskId;
    expect((await s.clients.tasks.getTask({ taskId })).task?.workspaceRoot).toBe("/Users/someone/projects/app");
    const refused = await rejection(s.clients.tasks.resume({ taskId }));
    expect(refused.code).toBe(Code.FailedPrecondition);
    expect(refused.rawMessage).toContain("/Users/someone/projects/app");
    expect(refused.findDetails(ErrorDetailSchema)[0]?.reason).toBe(ErrorReason.NO_WORKSPACE);
  });

  it("continues a long legacy task with the conversation Cline would send, not the whole history file", async () => {
    const roots = testRoots("dline-import-long-");
    const workspace = makeWorkspace(roots.base);
    // 4,504 messages of about 800 bytes, of which Cline had dropped all but the first pair and the last 102.
    const conversation: unknown[] = [];
    for (let i = 0; i < 4504; i++) {
      const role = i % 2 ? "assistant" : "user";
      conversation.push({
        role,
        content: [{ type: "text", text: `${role} message ${i}: ${"x".repeat(780)}` }],
        ts: 1_719_000_000_000 + i,
      });
    }
    writeLegacyTask(vscodeGlobalStorage(roots.home, "Code"), "6201", {
      task: "A long one",
      cwd: workspace,
      conversation,
      deletedRange: [2, 4401],
      contextHistory: contextTextEdit(
        1,
        0,
        "[NOTE] Some previous conversation history with the user has been removed to maintain optimal context window length.",
      ),
    });
    const clineBefore = snapshotTree(roots.home);
    const s = await sidecar(roots);
    const { server } = await configureModel(s.clients, "anthropic", {
      turns: [{ text: "Continuing.", toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] }],
    });
    onCleanup(() => server.stop());
    const res = await s.clients.imports.importCline({ all: true });
    expect(nth(res.results, 0, "import result").outcome).toBe("imported");
    expect(nth(res.results, 0, "import result").notCarriedOver.join("\n")).toMatch(
      /4400 earlier message\(s\) Cline had already removed/,
    );
    const taskId = nth(res.results, 0, "import result").taskId;
    await s.clients.tasks.sendMessage({ taskId, text: "Go on" });
    await followUntilDone(s.clients, taskId);
    const body = JSON.stringify(recorded(await server.requests(), 0).body);
    expect(body).toContain("user message 0:");
    expect(body).toContain("[NOTE] Some previous conversation history");
    expect(body).not.toContain("assistant message 1:");
    expect(body).not.toContain("message 2:");
    expect(body).not.toContain("message 4401:");
    expect(body).toContain("user message 4402:");
    expect(body).toContain("assistant message 4503:");
    // About 104 messages of 800 bytes, not 3.6 MB.
    expect(body.length).toBeLessThan(200_000);
    expect(snapshotTree(roots.home)).toEqual(clineBefore);
  });
});
