/**
 * The VS Code extension's pure parts (no editor needed): restart backoff, locating the core,
 * the restore menu, the checkpoint header, the settings mirror's mapping, the host-state
 * import payload, and the chat model folding task events.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  CheckpointState,
  GetStatusResponseSchema,
  KeptReason,
  RestoreMode,
} from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import {
  AskKind,
  MessageRole,
  TaskEventSchema,
  TaskStatus,
  type TaskEvent,
} from "../../core/src/gen/dline/v1/task_pb.js";
import { ChatModel } from "../../adapters/vscode/src/chat/chat-model.js";
import { continueInFolder, errorNotice, errorReason } from "../../adapters/vscode/src/chat/error-banner.js";
import { ErrorDetailSchema, ErrorReason } from "../../core/src/gen/dline/v1/errors_pb.js";
import { checkpointHeader, MULTI_ROOT, NO_WORKSPACE } from "../../adapters/vscode/src/checkpoints/checkpoint-header.js";
import { HeaderUpdates } from "../../adapters/vscode/src/checkpoints/header-updates.js";
import {
  checkpointLabel,
  restoreNotices,
  restoreOptions,
} from "../../adapters/vscode/src/checkpoints/restore-options.js";
import { toImportableState } from "../../adapters/vscode/src/settings/host-state.js";
import {
  corePatchFromHost,
  HOST_DEFAULTS,
  hostValuesFromCore,
} from "../../adapters/vscode/src/settings/settings-mapping.js";
import { locateCore } from "../../adapters/vscode/src/sidecar/locate-core.js";
import { RestartPolicy } from "../../adapters/vscode/src/sidecar/restart-policy.js";

describe("RestartPolicy", () => {
  const options = { initialDelayMs: 100, maxDelayMs: 1_000, healthyAfterMs: 10_000, maxConsecutiveFailures: 5 };

  it("backs off exponentially up to the ceiling, then gives up", () => {
    const policy = new RestartPolicy(options);
    const delays = [1, 2, 3, 4, 5].map(() => policy.onExit(50));
    expect(delays.map((d) => (d.restart ? d.delayMs : -1))).toEqual([100, 200, 400, 800, 1_000]);
    expect(policy.onExit(50)).toEqual({ restart: false, attempt: 6 });
  });

  it("starts again from the first delay after a healthy run or a reset", () => {
    const policy = new RestartPolicy(options);
    policy.onExit(0);
    policy.onStartFailure();
    expect(policy.onExit(20_000)).toEqual({ restart: true, delayMs: 100, attempt: 1 });
    policy.onExit(0);
    policy.reset();
    expect(policy.onExit(0)).toEqual({ restart: true, delayMs: 100, attempt: 1 });
  });
});

describe("locateCore", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dline-vscode-locate-"));
  const executable = (file: string) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, "#!/bin/sh\n", { mode: 0o755 });
    return file;
  };
  const extension = path.join(dir, "repo", "adapters", "vscode");
  fs.mkdirSync(extension, { recursive: true });

  it("prefers the setting, then DLINE_CORE, then the bundled binary, then the repository build", () => {
    const fromSetting = executable(path.join(dir, "setting", "dline-core"));
    const fromEnv = executable(path.join(dir, "env", "dline-core"));
    const repository = executable(path.join(dir, "repo", "dist", "dline-core"));
    expect(locateCore(fromSetting, { DLINE_CORE: fromEnv }, extension)).toEqual({
      path: fromSetting,
      source: "setting",
    });
    expect(locateCore("", { DLINE_CORE: fromEnv }, extension)).toEqual({ path: fromEnv, source: "DLINE_CORE" });
    expect(locateCore(undefined, {}, extension)).toEqual({ path: repository, source: "repository" });
    const bundled = executable(path.join(extension, "bin", "dline-core"));
    expect(locateCore(undefined, {}, extension)).toEqual({ path: bundled, source: "bundled" });
  });

  it("names an explicit path that is not an executable instead of falling back", () => {
    const notExecutable = path.join(dir, "plain-file");
    fs.writeFileSync(notExecutable, "x", { mode: 0o644 });
    expect(() => locateCore(notExecutable, {}, extension)).toThrow(/dline\.corePath setting is not an executable file/);
    expect(() => locateCore(undefined, { DLINE_CORE: path.join(dir, "missing") }, extension)).toThrow(
      /DLINE_CORE variable/,
    );
    expect(() => locateCore(undefined, {}, path.join(dir, "elsewhere", "a", "b"))).toThrow(/was not found/);
  });
});

describe("restore menu", () => {
  it("offers the three restores with the specification's menu texts", () => {
    const options = restoreOptions({ hasFiles: true, compaction: false, restored: false });
    expect(options.map((o) => [o.label, o.description, o.more, o.disabled, o.mode])).toEqual([
      [
        "Restore Files & Task",
        "Revert files and clear messages after this point",
        false,
        false,
        RestoreMode.FILES_AND_TASK,
      ],
      ["Restore Files Only", "Revert files to this checkpoint", true, false, RestoreMode.FILES],
      ["Restore Task Only", "Clear messages after this point", true, false, RestoreMode.TASK],
    ]);
    expect(checkpointLabel({ hasFiles: true, compaction: false, restored: false })).toBe("Checkpoint");
  });

  it("only Restore Task Only without a file snapshot or for a compaction checkpoint", () => {
    for (const target of [
      { hasFiles: false, compaction: false, restored: false },
      { hasFiles: true, compaction: true, restored: false },
    ]) {
      expect(restoreOptions(target).map((o) => [o.label, o.more])).toEqual([["Restore Task Only", false]]);
    }
    expect(checkpointLabel({ hasFiles: true, compaction: true, restored: false })).toBe("Compaction checkpoint");
  });

  it("disables Restore Files Only after a file restore and says so on the marker", () => {
    const target = { hasFiles: true, compaction: false, restored: true };
    expect(restoreOptions(target).find((o) => o.mode === RestoreMode.FILES)?.disabled).toBe(true);
    expect(checkpointLabel(target)).toBe("Checkpoint (restored)");
  });

  it("after a file restore, says which files were kept as they were, and why", () => {
    expect(restoreNotices({ restoredPaths: ["a.txt"], deletedPaths: ["new.txt"], keptPaths: [] })).toEqual({
      info: "Dline: files restored to the checkpoint (2 files).",
    });
    // The person's git history moved since the checkpoint: the warning says a restore does not undo it.
    expect(
      restoreNotices({
        restoredPaths: ["a.txt"],
        deletedPaths: [],
        keptPaths: [],
        repositoryNote:
          "Your git repository moved since this checkpoint (main at 1a2b3c4d then, main at 5e6f7a8b now).",
      }),
    ).toEqual({
      info: "Dline: files restored to the checkpoint (1 file).",
      warning: "Dline: Your git repository moved since this checkpoint (main at 1a2b3c4d then, main at 5e6f7a8b now).",
    });
    // A file beyond a folder the person replaced by a link: kept, and why.
    expect(
      restoreNotices({
        restoredPaths: [],
        deletedPaths: ["t.txt"],
        keptPaths: [{ path: "lib/new.js", reason: KeptReason.BEYOND_LINK }],
      }).warning,
    ).toBe("Dline: kept as is: lib/new.js (a folder on its way is a link now).");
    // A restore of the task that was running: the core stopped it first, and the notice says so.
    expect(restoreNotices({ restoredPaths: [], deletedPaths: ["ticks.txt"], keptPaths: [], runStopped: true })).toEqual(
      {
        info: "Dline: the task was running and was stopped first; files restored to the checkpoint (1 file).",
      },
    );
    const notices = restoreNotices({
      restoredPaths: ["notes.md"],
      deletedPaths: [],
      keptPaths: [
        { path: "assets/big.bin", reason: KeptReason.TOO_LARGE },
        { path: "sources/.env\u001b[2J", reason: KeptReason.NOT_TRACKED },
      ],
    });
    expect(notices.info).toBe("Dline: files restored to the checkpoint (1 file; 2 kept as they were).");
    expect(notices.warning).toBe(
      "Dline: kept as is: assets/big.bin (too large to snapshot), sources/.env\\e[2J (not tracked by checkpoints).",
    );
    // A command that rewrote a whole ignored folder: the first ten by name, then how many more.
    const many = restoreNotices({
      restoredPaths: [],
      deletedPaths: [],
      keptPaths: Array.from({ length: 13 }, (_, i) => ({ path: `build/f${i}.js`, reason: KeptReason.NOT_TRACKED })),
    });
    expect(many.warning).toMatch(
      /^Dline: kept as is: build\/f0\.js \(not tracked by checkpoints\), .*build\/f9\.js \(not tracked by checkpoints\) and 3 more\.$/,
    );
    expect(many.warning).not.toContain("f10");
    // The core's look stopped at its limit inside a large ignored folder: the warning says more may have changed.
    const cut = restoreNotices({
      restoredPaths: ["a.txt"],
      deletedPaths: [],
      keptPaths: [{ path: "node_modules/x/index.js", reason: KeptReason.NOT_TRACKED }],
      keptPathsIncomplete: true,
    });
    expect(cut.warning).toBe(
      "Dline: kept as is: node_modules/x/index.js (not tracked by checkpoints). More files the checkpoints do not track may have changed too; they were left as they are.",
    );
    // Nothing named: not said (a large node_modules stops the look on every restore).
    expect(
      restoreNotices({ restoredPaths: ["a.txt"], deletedPaths: [], keptPaths: [], keptPathsIncomplete: true }),
    ).toEqual({ info: "Dline: files restored to the checkpoint (1 file)." });
  });
});

describe("checkpoint header", () => {
  const status = (state: CheckpointState, message = "", canRetry = false, canDisable = false) =>
    create(GetStatusResponseSchema, { state, message, canRetry, canDisable });

  it("says what the editor knows: no workspace, multi-root", () => {
    expect(checkpointHeader([], undefined)?.message).toBe(NO_WORKSPACE);
    expect(checkpointHeader(["/a", "/b"], status(CheckpointState.READY))?.message).toBe(MULTI_ROOT);
  });

  it("shows the core's sentence and its Retry / Disable offers; nothing when checkpoints work", () => {
    expect(checkpointHeader(["/p"], status(CheckpointState.READY))).toBeUndefined();
    expect(checkpointHeader(["/p"], status(CheckpointState.INITIALIZING))).toBeUndefined();
    expect(checkpointHeader(["/p"], status(CheckpointState.FAILED, "boom", true, true))).toEqual({
      state: "failed",
      message: "boom",
      canRetry: true,
      canDisable: true,
    });
    expect(
      checkpointHeader(["/p"], status(CheckpointState.UNAVAILABLE, "Git must be installed to use checkpoints.", true))
        ?.message,
    ).toBe("Git must be installed to use checkpoints.");
    expect(checkpointHeader(["/p"], status(CheckpointState.SLOW_INITIALIZATION, "slow", false, true))?.canDisable).toBe(
      true,
    );
  });
});

describe("settings mirror mapping", () => {
  it("maps the core's settings to VS Code values, defaults for what is unset", () => {
    expect(hostValuesFromCore({})).toEqual(HOST_DEFAULTS);
    const values = hostValuesFromCore({
      checkpointsEnabled: false,
      defaultProfileId: "p1",
      autoApprovalSettings: { enabled: true, readFiles: true, maxRequests: 7 },
    });
    expect(values["checkpoints.enabled"]).toBe(false);
    expect(values.defaultProfile).toBe("p1");
    expect(values["autoApproval.enabled"]).toBe(true);
    expect(values["autoApproval.readFiles"]).toBe(true);
    expect(values["autoApproval.editFiles"]).toBe(false);
    expect(values["autoApproval.maxRequests"]).toBe(7);
  });

  it("sends only what a person changed, and nothing when both agree (no echo)", () => {
    const core = { checkpointsEnabled: false, autoApprovalSettings: { enabled: true, maxRequests: 7 } };
    expect(corePatchFromHost(hostValuesFromCore(core), core)).toBeUndefined();
    const changed = { ...hostValuesFromCore(core), "autoApproval.editFiles": true };
    expect(corePatchFromHost(changed, core)).toEqual({
      autoApprovalSettings: {
        enabled: true,
        readFiles: false,
        editFiles: true,
        executeSafeCommands: false,
        executeAllCommands: false,
        useMcp: false,
        maxRequests: 7,
      },
    });
    expect(corePatchFromHost({ ...hostValuesFromCore(core), "checkpoints.enabled": true }, core)).toEqual({
      checkpointsEnabled: true,
    });
  });
});

describe("host state import payload", () => {
  it("keeps JSON values, drops undefined, unserialisable values and reserved __ keys", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    const state = toImportableState([
      ["taskHistory", [{ id: "t1" }]],
      ["mode", "plan"],
      ["undefinedValue", undefined],
      ["__vscodeMigrationVersion", 1],
      ["cyclic", cyclic],
      ["big", 10n],
      ["date", new Date(0)],
    ]);
    expect(state).toEqual({ taskHistory: [{ id: "t1" }], mode: "plan", date: "1970-01-01T00:00:00.000Z" });
  });
});

describe("ChatModel", () => {
  let seq = 0n;
  const event = (e: TaskEvent["event"]): TaskEvent => create(TaskEventSchema, { seq: ++seq, taskId: "t1", event: e });
  const message = (id: string, role: MessageRole, kind: string, text: string, extra: Record<string, unknown> = {}) => ({
    id,
    role,
    kind,
    text,
    ...extra,
  });

  it("folds streamed text, a tool call with output, an ask, checkpoints and the status", () => {
    const model = new ChatModel();
    model.reset("t1");
    model.apply(
      event({
        case: "messageAdded",
        value: { message: message("u1", MessageRole.USER, "text", "Greet the world") } as never,
      }),
    );
    model.apply(
      event({
        case: "messageAdded",
        value: { message: message("a1", MessageRole.ASSISTANT, "text", "", { partial: true }) } as never,
      }),
    );
    model.apply(event({ case: "messageDelta", value: { messageId: "a1", text: "I will " } as never }));
    model.apply(event({ case: "messageDelta", value: { messageId: "a1", text: "edit." } as never }));
    model.apply(
      event({
        case: "messageFinalized",
        value: { message: message("a1", MessageRole.ASSISTANT, "text", "I will edit.") } as never,
      }),
    );
    model.apply(
      event({
        case: "ask",
        value: {
          askId: "k1",
          kind: AskKind.TOOL_APPROVAL,
          tool: "write_to_file",
          summary: "write a.txt",
          options: [],
        } as never,
      }),
    );
    model.apply(event({ case: "statusChanged", value: { status: TaskStatus.WAITING, reason: "" } as never }));
    expect(model.snapshot.pendingAsk).toMatchObject({ askId: "k1", kind: "tool", tool: "write_to_file" });
    model.apply(event({ case: "askResolved", value: { askId: "k1", approved: true } as never }));
    expect(model.snapshot.pendingAsk).toBeUndefined();
    model.apply(
      event({
        case: "messageAdded",
        value: {
          message: message("m1", MessageRole.TOOL, "tool", "write_to_file a.txt", { tool: "write_to_file" }),
        } as never,
      }),
    );
    model.apply(
      event({
        case: "toolStarted",
        value: { toolCallId: "c1", tool: "write_to_file", summary: "write a.txt" } as never,
      }),
    );
    model.apply(event({ case: "toolOutput", value: { toolCallId: "c1", chunk: "wrote " } as never }));
    model.apply(event({ case: "toolOutput", value: { toolCallId: "c1", chunk: "a.txt" } as never }));
    model.apply(event({ case: "toolFinished", value: { toolCallId: "c1", ok: true, result: "ok" } as never }));
    model.apply(
      event({
        case: "messageFinalized",
        value: {
          message: message("m1", MessageRole.TOOL, "tool", "write_to_file a.txt", { tool: "write_to_file" }),
        } as never,
      }),
    );
    model.apply(
      event({
        case: "checkpointSaved",
        value: { checkpointId: "cp1", messageId: "m1", kind: "CHECKPOINT_KIND_TURN" } as never,
      }),
    );
    model.apply(event({ case: "usage", value: { tokensIn: 10n, tokensOut: 5n, cost: 0.5 } as never }));
    model.apply(event({ case: "statusChanged", value: { status: TaskStatus.COMPLETED, reason: "" } as never }));

    const s = model.snapshot;
    expect(s.title).toBe("Greet the world");
    expect(s.status).toBe("completed");
    expect(s.items.map((i) => (i.type === "message" ? `${i.role}:${i.text}` : i.type))).toEqual([
      "user:Greet the world",
      "assistant:I will edit.",
      "tool:write_to_file a.txt",
    ]);
    expect(s.items[2]).toMatchObject({ toolCallId: "c1", output: "wrote a.txt", ok: true, checkpointId: "cp1" });
    expect(s.checkpoints).toEqual([
      { id: "cp1", kind: "CHECKPOINT_KIND_TURN", messageId: "m1", hasFiles: true, restored: false },
    ]);
    expect(s.usage).toEqual({ tokensIn: 10, tokensOut: 5, cost: 0.5 });
  });

  it("an opened task that no sidecar runs reads as interrupted; history can say interrupted", async () => {
    const { create: make } = await import("@bufbuild/protobuf");
    const { GetTaskResponseSchema } = await import("../../core/src/gen/dline/v1/task_pb.js");
    const model = new ChatModel();
    model.load(
      make(GetTaskResponseSchema, {
        task: { id: "t1", title: "T", status: TaskStatus.RUNNING },
        ownerPid: 0,
        messages: [message("u1", MessageRole.USER, "text", "hi") as never],
      }),
    );
    expect(model.snapshot.status).toBe("interrupted");
    model.load(
      make(GetTaskResponseSchema, { task: { id: "t1", title: "T", status: TaskStatus.RUNNING }, ownerPid: 1234 }),
    );
    expect(model.snapshot.status).toBe("running");
    model.setStatusFromHistory(TaskStatus.COMPLETED); // events say that: ignored here
    expect(model.snapshot.status).toBe("running");
    model.setStatusFromHistory(TaskStatus.INTERRUPTED);
    expect(model.snapshot.status).toBe("interrupted");
  });

  it("folds reasoning, retries (dropping the failed attempt's answer), waits and an unknown cost", () => {
    const model = new ChatModel();
    model.reset("t1");
    model.apply(
      event({ case: "messageAdded", value: { message: message("u1", MessageRole.USER, "text", "hi") } as never }),
    );
    model.apply(
      event({
        case: "messageAdded",
        value: { message: message("r1", MessageRole.ASSISTANT, "reasoning", "Let me ", { partial: true }) } as never,
      }),
    );
    model.apply(event({ case: "reasoningDelta", value: { messageId: "r1", text: "think." } as never }));
    model.apply(
      event({
        case: "messageAdded",
        value: { message: message("a1", MessageRole.ASSISTANT, "text", "half an ans", { partial: true }) } as never,
      }),
    );
    model.apply(
      event({
        case: "modelRetry",
        value: {
          attempt: 2,
          maxAttempts: 6,
          delayMs: 4000n,
          reason: "Overloaded",
          message: "retrying in 4 s (attempt 2 of 6)",
          discardedMessageIds: ["r1", "a1"],
        } as never,
      }),
    );
    expect(model.snapshot.items.map((i) => (i.type === "message" ? i.id : i.type))).toEqual(["u1"]);
    expect(model.snapshot.notice).toBe("retrying in 4 s (attempt 2 of 6): Overloaded");
    model.apply(
      event({
        case: "modelWaiting",
        value: {
          waitedMs: 5000n,
          timeoutMs: 60000n,
          message: "waiting for the model: 5 s (gives up after 60 s without an answer)",
        } as never,
      }),
    );
    expect(model.snapshot.notice).toContain("waiting for the model: 5 s");
    model.apply(
      event({
        case: "messageAdded",
        value: { message: message("r2", MessageRole.ASSISTANT, "reasoning", "Again ", { partial: true }) } as never,
      }),
    );
    model.apply(event({ case: "reasoningDelta", value: { messageId: "r2", text: "thinking." } as never }));
    expect(model.snapshot.notice).toBe("");
    expect(model.snapshot.items.find((i) => i.type === "message" && i.id === "r2")).toMatchObject({
      kind: "reasoning",
      text: "Again thinking.",
    });
    model.apply(event({ case: "usage", value: { tokensIn: 10n, tokensOut: 5n, cost: 0, costUnknown: true } as never }));
    model.apply(event({ case: "usage", value: { tokensIn: 10n, tokensOut: 5n, cost: 0.01 } as never }));
    expect(model.snapshot.usage).toEqual({ tokensIn: 20, tokensOut: 10, cost: 0.01, costUnknown: true });
  });

  it("drops the rows after a rewind, and their checkpoints", () => {
    const model = new ChatModel();
    model.reset("t1");
    model.apply(
      event({ case: "messageAdded", value: { message: message("u1", MessageRole.USER, "text", "one") } as never }),
    );
    model.apply(
      event({ case: "messageAdded", value: { message: message("a1", MessageRole.ASSISTANT, "text", "two") } as never }),
    );
    model.apply(
      event({
        case: "checkpointSaved",
        value: { checkpointId: "cp1", messageId: "a1", kind: "CHECKPOINT_KIND_TURN" } as never,
      }),
    );
    model.apply(event({ case: "error", value: { code: "unavailable", message: "model down" } as never }));
    model.apply(event({ case: "rewound", value: { afterMessageId: "u1" } as never }));
    expect(model.snapshot.items.map((i) => (i.type === "message" ? i.id : i.type))).toEqual(["u1"]);
    expect(model.snapshot.checkpoints).toEqual([]);
    model.apply(event({ case: "rewound", value: { afterMessageId: "" } as never }));
    expect(model.snapshot.items).toEqual([]);
  });
});

describe("a task without a folder on this machine", () => {
  const refusal = (reason: ErrorReason) =>
    new ConnectError("Task t has no workspace.", Code.FailedPrecondition, undefined, [
      { desc: ErrorDetailSchema, value: { reason } },
    ]);

  it("a notification shows the core's sentence without the RPC code", () => {
    const refused = new ConnectError('Task "Run it" (t2) is running in this workspace.', Code.FailedPrecondition);
    expect(refused.message).toContain("[failed_precondition]");
    expect(errorNotice(refused)).toBe('Dline: Task "Run it" (t2) is running in this workspace.');
    expect(errorNotice(new Error("plain"))).toBe("Dline: plain");
  });

  it("continues in the window's only folder; otherwise the refusal stands", () => {
    expect(errorReason(refusal(ErrorReason.NO_WORKSPACE))).toBe("ERROR_REASON_NO_WORKSPACE");
    expect(continueInFolder(errorReason(refusal(ErrorReason.NO_WORKSPACE)), ["/home/me/app"])).toBe("/home/me/app");
    expect(continueInFolder(errorReason(refusal(ErrorReason.NO_WORKSPACE)), [])).toBeUndefined();
    expect(continueInFolder(errorReason(refusal(ErrorReason.NO_WORKSPACE)), ["/a", "/b"])).toBeUndefined();
    expect(continueInFolder(errorReason(refusal(ErrorReason.NO_MODEL)), ["/home/me/app"])).toBeUndefined();
  });
});

describe("HeaderUpdates", () => {
  it("drops a status read asked before Disable answered, keeps one asked after", () => {
    const updates = new HeaderUpdates();
    // The core restarted: the chat asks for the header's status; meanwhile Disable answers.
    const readBeforeDisable = updates.read();
    updates.answered();
    const readAfterDisable = updates.read();
    expect(readBeforeDisable()).toBe(false);
    expect(readAfterDisable()).toBe(true);
    // Two reads with no action between: both may be shown.
    const again = updates.read();
    expect(readAfterDisable()).toBe(true);
    expect(again()).toBe(true);
  });
});
