/**
 * The VS Code chat's fold (adapters/vscode/src/chat/chat-model.ts) and the pure pieces around
 * it: tool calls on their rows (status, edits, exact command, feedback) live and reopened,
 * checkpoint progress, the context size, control characters made visible, the preferences'
 * mapping, and telling a failing core once.
 */
import { create } from "@bufbuild/protobuf";
import { afterEach, describe, expect, it } from "vitest";
import { FileStatus } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { ProfileSource, ProfileSchema } from "../../core/src/gen/dline/v1/settings_pb.js";
import {
  AskKind,
  GetTaskResponseSchema,
  MessageRole,
  TaskEventSchema,
  TaskStatus,
  ToolCallStatus,
  type TaskEvent,
} from "../../core/src/gen/dline/v1/task_pb.js";
import { ChatModel } from "../../adapters/vscode/src/chat/chat-model.js";
import type { ChatMessageItem } from "../../adapters/vscode/src/chat/chat-state.js";
import {
  autoApprovalFromCore,
  autoApprovalPatch,
  modeOf,
  profileViews,
} from "../../adapters/vscode/src/chat/preferences-mapping.js";
import { FailureEpisode } from "../../adapters/vscode/src/sidecar/failure-episode.js";
import { visible, visibleLine, visibleParts } from "../../adapters/vscode/src/text/visible-text.js";
import { startSidecar } from "../helpers/sidecar.js";
import { configureModel, followUntilDone, makeWorkspace, setAutoApproval } from "../runtime/harness.js";

let seq = 0n;
const event = (e: TaskEvent["event"]): TaskEvent => create(TaskEventSchema, { seq: ++seq, taskId: "t1", event: e });
const toolRow = (status: ToolCallStatus, extra: Record<string, unknown> = {}) => ({
  id: "m1",
  role: MessageRole.TOOL,
  kind: "tool",
  text: "replace_in_file a.txt",
  tool: "replace_in_file",
  partial: status === ToolCallStatus.PENDING || status === ToolCallStatus.RUNNING,
  toolCall: {
    toolCallId: "c1",
    tool: "replace_in_file",
    status,
    input: '{"path":"a.txt"}',
    edits: [{ path: "a.txt", status: FileStatus.MODIFIED, originalText: "a\n", proposedText: "b\n" }],
    ...extra,
  },
});
const rowOf = (model: ChatModel, id = "m1") =>
  model.snapshot.items.find((i): i is ChatMessageItem => i.type === "message" && i.id === id);

describe("the chat fold", () => {
  it("restored to before its first message, the task's title is the next first message", () => {
    const model = new ChatModel();
    model.load(
      create(GetTaskResponseSchema, {
        task: { id: "t1", title: "Write notes", status: TaskStatus.COMPLETED },
        messages: [
          { id: "u1", role: MessageRole.USER, kind: "text", text: "Write notes" },
          { id: "a1", role: MessageRole.ASSISTANT, kind: "completion", text: "Done." },
        ],
      }),
    );
    expect(model.snapshot.title).toBe("Write notes");
    model.apply(event({ case: "rewound", value: { afterMessageId: "u1" } as never }));
    expect(model.snapshot.title).toBe("Write notes");
    model.apply(event({ case: "rewound", value: { afterMessageId: "" } as never }));
    expect(model.snapshot.title).toBe("");
    const first = { id: "u2", role: MessageRole.USER, kind: "text", text: "Write other notes\nin French" };
    model.apply(event({ case: "messageAdded", value: { message: first } as never }));
    expect(model.snapshot.title).toBe("Write other notes");
  });

  it("shows an edit approval with its change, and the row's call from pending to done with the applied edit", () => {
    const model = new ChatModel();
    model.reset("t1");
    model.apply(event({ case: "messageAdded", value: { message: toolRow(ToolCallStatus.PENDING) } as never }));
    model.apply(
      event({
        case: "ask",
        value: {
          askId: "k1",
          kind: AskKind.TOOL_APPROVAL,
          tool: "replace_in_file",
          summary: "replace_in_file a.txt",
          toolCallId: "c1",
          edits: [{ path: "a.txt", status: FileStatus.MODIFIED, originalText: "a\n", proposedText: "b\n" }],
        } as never,
      }),
    );
    expect(model.snapshot.pendingAsk).toMatchObject({
      kind: "tool",
      toolCallId: "c1",
      edits: [{ path: "a.txt", status: "modified", originalText: "a\n", proposedText: "b\n", truncated: false }],
    });
    expect(rowOf(model)?.toolCall?.status).toBe("pending");
    model.apply(event({ case: "askResolved", value: { askId: "k1", approved: true } as never }));
    model.apply(event({ case: "messageFinalized", value: { message: toolRow(ToolCallStatus.RUNNING) } as never }));
    model.apply(
      event({ case: "toolStarted", value: { toolCallId: "c1", tool: "replace_in_file", messageId: "m1" } as never }),
    );
    expect(rowOf(model)).toMatchObject({ toolCallId: "c1", toolCall: { status: "running" } });
    model.apply(
      event({
        case: "toolFinished",
        value: {
          toolCallId: "c1",
          ok: true,
          result: "Applied",
          status: ToolCallStatus.DONE,
          edits: [{ path: "a.txt", status: FileStatus.MODIFIED, originalText: "a\n", proposedText: "b\n" }],
        } as never,
      }),
    );
    expect(rowOf(model)).toMatchObject({ ok: true, toolCall: { status: "done", edits: [{ path: "a.txt" }] } });
    model.apply(
      event({
        case: "messageFinalized",
        value: { message: toolRow(ToolCallStatus.DONE, { output: "Applied 1 block to a.txt." }) } as never,
      }),
    );
    expect(rowOf(model)?.toolCall).toMatchObject({ status: "done", output: "Applied 1 block to a.txt." });
    expect(model.snapshot.pendingAsk).toBeUndefined();
  });

  it("a command approval carries the exact command and its folder; a denial keeps the feedback on the row", () => {
    const model = new ChatModel();
    model.reset("t1");
    const command = { command: "rm -rf build\x1b[2K", workingDirectory: "/work/project" };
    model.apply(
      event({
        case: "ask",
        value: {
          askId: "k2",
          kind: AskKind.COMMAND_APPROVAL,
          tool: "execute_command",
          summary: "execute_command rm",
          command,
          toolCallId: "c2",
        } as never,
      }),
    );
    expect(model.snapshot.pendingAsk).toMatchObject({ kind: "command", command });
    const denied = {
      id: "m2",
      role: MessageRole.TOOL,
      kind: "command",
      text: "execute_command rm",
      tool: "execute_command",
      toolCall: {
        toolCallId: "c2",
        tool: "execute_command",
        status: ToolCallStatus.DENIED,
        command,
        feedback: "not that folder",
      },
    };
    model.apply(event({ case: "messageAdded", value: { message: denied } as never }));
    model.apply(event({ case: "askResolved", value: { askId: "k2", text: "not that folder" } as never }));
    model.apply(event({ case: "statusChanged", value: { status: TaskStatus.RUNNING } as never }));
    model.apply(
      event({
        case: "messageAdded",
        value: { message: { id: "f1", role: MessageRole.USER, kind: "denied", text: "not that folder" } } as never,
      }),
    );
    expect(rowOf(model, "m2")?.toolCall).toMatchObject({ status: "denied", feedback: "not that folder", command });
    expect(model.snapshot.status).toBe("running");
    expect(model.snapshot.items.filter((i) => i.type === "message" && i.kind === "denied")).toHaveLength(1);
  });

  it("shows the checkpoints' progress while they initialize, and drops it once they are ready", () => {
    const model = new ChatModel();
    model.reset("t1");
    model.apply(
      event({
        case: "checkpointStatus",
        value: {
          state: "CHECKPOINT_STATE_INITIALIZING",
          message: "Checkpoints are initializing.",
          phase: "staging",
          filesDone: 120n,
          filesTotal: 4000n,
        } as never,
      }),
    );
    expect(model.snapshot.checkpointProgress).toEqual({
      state: "initializing",
      message: "Checkpoints are initializing.",
      phase: "staging",
      filesDone: 120,
      filesTotal: 4000,
    });
    model.apply(
      event({
        case: "checkpointStatus",
        value: { state: "CHECKPOINT_STATE_READY", message: "Checkpoints are ready." } as never,
      }),
    );
    expect(model.snapshot.checkpointProgress).toBeUndefined();
  });

  it("a file restore made in any window marks its checkpoint restored; its Undo takes the mark away", () => {
    const model = new ChatModel();
    model.reset("t1");
    const cp = (id: string, kind: string) => ({ id, kind, messageId: `m-${id}`, hasFiles: true, restored: false });
    model.setCheckpoints([cp("base", "CHECKPOINT_KIND_BASELINE"), cp("turn", "CHECKPOINT_KIND_TURN")]);
    const restored = () => model.snapshot.checkpoints.filter((c) => c.restored).map((c) => c.id);
    model.apply(
      event({
        case: "filesRestored",
        value: { checkpointId: "base", undoCheckpointId: "undo1", undo: false } as never,
      }),
    );
    expect(restored()).toEqual(["base"]);
    // The Undo restores the "before restore" checkpoint: no marker of the chat reads "restored".
    model.apply(
      event({
        case: "filesRestored",
        value: { checkpointId: "undo1", undoCheckpointId: "undo2", undo: true } as never,
      }),
    );
    expect(restored()).toEqual([]);
  });

  it("takes the context size from the task's own requests that report usage", () => {
    const model = new ChatModel();
    model.reset("t1");
    model.apply(
      event({
        case: "usage",
        value: { tokensIn: 1200n, cacheReads: 800n, tokensOut: 30n, contextWindow: 32000n } as never,
      }),
    );
    expect(model.snapshot.context).toEqual({ tokens: 2030, window: 32000 });
    // A subagent's request (no window) and a request without usage leave it as it was.
    model.apply(event({ case: "usage", value: { tokensIn: 50n, tokensOut: 5n } as never }));
    model.apply(event({ case: "usage", value: { contextWindow: 32000n } as never }));
    expect(model.snapshot.context).toEqual({ tokens: 2030, window: 32000 });
    expect(model.snapshot.usage).toMatchObject({ tokensIn: 1250, tokensOut: 35 });
  });

  it("a reopened task shows its calls' status, output and edits, its context and its model", () => {
    const model = new ChatModel();
    model.load(
      create(GetTaskResponseSchema, {
        task: { id: "t1", title: "T", status: TaskStatus.INTERRUPTED },
        messages: [
          toolRow(ToolCallStatus.INTERRUPTED, { reason: "The task stopped before the call finished." }) as never,
        ],
        profileId: "work",
        contextTokens: 5000n,
        contextWindow: 200000n,
      }),
    );
    expect(rowOf(model)?.toolCall).toMatchObject({
      status: "interrupted",
      reason: "The task stopped before the call finished.",
      edits: [{ path: "a.txt", status: "modified" }],
    });
    expect(model.snapshot.context).toEqual({ tokens: 5000, window: 200000 });
    expect(model.snapshot.preferences.taskProfileId).toBe("work");
    model.reset(undefined);
    expect(model.snapshot.preferences.taskProfileId).toBe("");
  });
});

describe("the fold of a live task against the same task reopened (real sidecar)", () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  });

  it("edits approved and auto-approved, a command denied with feedback: the rows read the same live and after GetTask", async () => {
    const sidecar = await startSidecar();
    cleanups.push(() => sidecar.stop());
    const { server, profileId } = await configureModel(sidecar.clients, "openai", {
      turns: [
        {
          text: "Editing.",
          toolCalls: [
            {
              name: "replace_in_file",
              input: { path: "README.md", diff: "------- SEARCH\n# demo\n=======\n# demo!\n+++++++ REPLACE" },
            },
          ],
        },
        {
          text: "Running.",
          toolCalls: [{ name: "execute_command", input: { command: "echo hi", requires_approval: true } }],
        },
        { text: "Then a note.", toolCalls: [{ name: "write_to_file", input: { path: "NOTE.md", content: "note\n" } }] },
        { text: "Done.", toolCalls: [{ name: "attempt_completion", input: { result: "Done." } }] },
      ],
    });
    cleanups.push(() => server.stop());
    const workspace = makeWorkspace(sidecar.roots.base);
    const { taskId } = await sidecar.clients.tasks.newTask({ workspaceRoot: workspace, text: "go", profileId });
    let asks = 0;
    const events = await followUntilDone(sidecar.clients, taskId, async (e) => {
      const ask = e.event.value as { askId: string };
      asks++;
      // The edit is approved, the command denied with feedback; then edits go without asking
      // (switched on before the denial lets the task go on, so the next edit never asks).
      if (asks === 2) await setAutoApproval(sidecar.clients, { editFiles: true });
      await sidecar.clients.tasks.respond({
        taskId,
        askId: ask.askId,
        approve: asks === 1,
        text: asks === 2 ? "not now" : "",
      });
    });
    const live = new ChatModel();
    live.reset(taskId);
    for (const e of events) live.apply(e);
    const reopened = new ChatModel();
    reopened.load(await sidecar.clients.tasks.getTask({ taskId }));

    const calls = (m: ChatModel) =>
      m.snapshot.items.flatMap((i) =>
        i.type === "message" && i.toolCall
          ? [
              {
                tool: i.toolCall.tool,
                status: i.toolCall.status,
                edits: i.toolCall.edits.map((e) => `${e.path} ${e.status}`),
                feedback: i.toolCall.feedback,
                command: i.toolCall.command?.command ?? "",
              },
            ]
          : [],
      );
    expect(calls(live)).toEqual([
      { tool: "replace_in_file", status: "done", edits: ["README.md modified"], feedback: "", command: "" },
      { tool: "execute_command", status: "denied", edits: [], feedback: "not now", command: "echo hi" },
      { tool: "write_to_file", status: "done", edits: ["NOTE.md added"], feedback: "", command: "" },
    ]);
    expect(calls(reopened)).toEqual(calls(live));
    expect(live.snapshot.status).toBe("completed");
    // The denial is one feedback row, not a completion of its own.
    expect(
      live.snapshot.items
        .filter((i) => i.type === "message" && i.kind === "denied")
        .map((i) => (i as ChatMessageItem).text),
    ).toEqual(["not now"]);
    expect(live.snapshot.items.filter((i) => i.type === "message" && i.kind === "completion")).toHaveLength(1);
  });
});

describe("control characters made visible", () => {
  it("shows escapes and direction overrides as visible escapes; newlines and tabs stay", () => {
    expect(visible("ls\x1b[2K\r\nnext\tcol\u202eevil")).toBe("ls\\e[2K\nnext\tcol\\u202eevil");
    expect(visible("bell\x07 del\x7f c1\x9b")).toBe("bell\\x07 del\\x7f c1\\x9b");
    expect(visibleLine("one\ntwo\tthree\r")).toBe("one\\ntwo\\tthree\\r");
    expect(visibleParts("a\x1bb")).toEqual([
      { text: "a", control: false },
      { text: "\\e", control: true },
      { text: "b", control: false },
    ]);
    expect(visibleParts("plain")).toEqual([{ text: "plain", control: false }]);
  });
});

describe("chat preferences", () => {
  it("reads auto-approval from the core with defaults, and patches whole objects", () => {
    const auto = autoApprovalFromCore({
      autoApprovalSettings: { enabled: true, editFiles: true, maxRequests: 5, readFiles: "yes" },
    });
    expect(auto).toEqual({
      enabled: true,
      readFiles: false,
      editFiles: true,
      executeSafeCommands: false,
      executeAllCommands: false,
      useMcp: false,
      maxRequests: 5,
    });
    expect(autoApprovalPatch(auto, { readFiles: true, maxRequests: "9" as never })).toEqual({
      ...auto,
      readFiles: true,
    });
    expect(modeOf("plan")).toBe("plan");
    expect(modeOf(undefined)).toBe("act");
  });

  it("lists profiles with where they come from and whether a key is set", () => {
    const views = profileViews([
      create(ProfileSchema, {
        id: "env-openai",
        name: "env",
        provider: "openai",
        model: "m",
        source: ProfileSource.ENVIRONMENT,
        secretsSet: ["api_key"],
        contextWindow: 8000n,
      }),
      create(ProfileSchema, {
        id: "work",
        name: "work",
        provider: "anthropic",
        model: "claude",
        source: ProfileSource.STORED,
      }),
    ]);
    expect(views.map((v) => [v.id, v.fromEnvironment, v.hasKey, v.contextWindow])).toEqual([
      ["env-openai", true, true, 8000],
      ["work", false, false, 0],
    ]);
  });
});

describe("a core that cannot start is told once per stretch of failures", () => {
  it("the first failure opens the stretch; retries do not; a start closes it", () => {
    const episode = new FailureEpisode();
    expect(episode.fail(new Error("missing"))).toBe(true);
    expect(episode.fail(new Error("missing again"))).toBe(false);
    expect(episode.fail(new Error("still"))).toBe(false);
    expect([episode.failing, episode.lastError?.message]).toEqual([true, "still"]);
    expect(episode.recover()).toBe(true);
    expect(episode.recover()).toBe(false);
    expect(episode.fail(new Error("broken later"))).toBe(true);
  });
});
