/**
 * Builds Cline data in temp folders the way Cline writes it. Legacy tasks (the classic
 * extension, v3.x): `tasks/<id>/ui_messages.json` (or the older `claude_messages.json`),
 * `api_conversation_history.json`, `context_history.json`, `task_metadata.json`, and the root's
 * `state/taskHistory.json` (one history item per task: working folder, favourite flag, deleted
 * range, totals), each written whole with JSON.stringify. Cline 4 sessions: the manifest
 * `<id>.json` and the messages document `<id>.messages.json` (`{version, updated_at, agent,
 * sessionId, messages}`; assistant messages carry `modelInfo: {id, provider, family}` and
 * `metrics`), subagent and teammate files beside them, and a legacy task Cline 4 resumed (same
 * id, `metadata.legacyTask`, the converted legacy conversation closed by Cline's notice).
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";

export const T0 = 1_717_000_000_000; // fixed start time: runs are deterministic

/** The notice Cline 4 appends to a legacy conversation it resumes (its wording). */
export const LEGACY_RESUME_WARNING =
  "Warning: this is a legacy conversation, which means tool names may have changed. Please use the most up-to-date tools you are aware of.";

export interface UsageFixture {
  tokensIn: number;
  tokensOut: number;
  cacheWrites: number;
  cacheReads: number;
  cost: number;
}

export function vscodeGlobalStorage(home: string, variant: "Code" | "Code - Insiders" | "VSCodium"): string {
  return path.join(home, ".config", variant, "User", "globalStorage", "saoudrizwan.claude-dev");
}

export function clineHomeData(home: string): string {
  return path.join(home, ".cline", "data");
}

export interface LegacyTaskOptions {
  task?: string;
  usages?: UsageFixture[];
  /** Versions before the usage moved into api_req_started wrote it in an api_req_finished after it. */
  usageInFinished?: boolean;
  /** Extra ui messages appended before the completion. */
  extra?: Record<string, unknown>[];
  /** The model recorded on assistant messages of the conversation. */
  model?: string;
  conversation?: unknown[] | false;
  metadata?: unknown;
  /** Modification time of the UI messages file. */
  mtime?: Date;
  /** Raw UI messages text (malformed fixtures). */
  rawUi?: string;
  rawConversation?: string;
  /** Pads the task to this many ui messages (benchmarks, large tasks). */
  padTo?: number;
  /** The UI messages file: ui_messages.json, or claude_messages.json as the oldest versions wrote. */
  uiFile?: "ui_messages.json" | "claude_messages.json";
  /** cwdOnTaskInitialization of the task's history item; null writes no history item. */
  cwd?: string | null;
  favorite?: boolean;
  /** conversationHistoryDeletedRange of the history item (and of the UI messages after it). */
  deletedRange?: [number, number];
  /** context_history.json, as ContextManager serialises it. */
  contextHistory?: unknown;
}

/** What Cline's getApiMetrics adds up for a usage entry list (for expectations). */
export function usageTotals(usages: UsageFixture[]): UsageFixture {
  return usages.reduce(
    (t, u) => ({
      tokensIn: t.tokensIn + u.tokensIn,
      tokensOut: t.tokensOut + u.tokensOut,
      cacheWrites: t.cacheWrites + u.cacheWrites,
      cacheReads: t.cacheReads + u.cacheReads,
      cost: t.cost + u.cost,
    }),
    { tokensIn: 0, tokensOut: 0, cacheWrites: 0, cacheReads: 0, cost: 0 },
  );
}

export function legacyUiMessages(o: LegacyTaskOptions = {}): Record<string, unknown>[] {
  const task = o.task ?? "Fix the failing test";
  const usages = o.usages ?? [{ tokensIn: 100, tokensOut: 20, cacheWrites: 5, cacheReads: 7, cost: 0.01 }];
  const out: Record<string, unknown>[] = [
    { ts: T0, type: "say", say: "task", text: task, conversationHistoryIndex: -1 },
  ];
  let ts = T0;
  for (const [i, u] of usages.entries()) {
    const request = `<task>\n${task}\n</task>`;
    if (o.usageInFinished) {
      out.push({
        ts: ++ts,
        type: "say",
        say: "api_req_started",
        text: JSON.stringify({ request }),
        conversationHistoryIndex: 2 * i,
      });
      out.push({
        ts: ++ts,
        type: "say",
        say: "api_req_finished",
        text: JSON.stringify(u),
        conversationHistoryIndex: 2 * i,
      });
    } else {
      out.push({
        ts: ++ts,
        type: "say",
        say: "api_req_started",
        text: JSON.stringify({ request, ...u }),
        conversationHistoryIndex: 2 * i,
      });
    }
    out.push({
      ts: ++ts,
      type: "say",
      say: "text",
      text: `Working on it (${ts}).`,
      conversationHistoryIndex: 2 * i + 1,
    });
  }
  out.push({
    ts: ++ts,
    type: "ask",
    ask: "tool",
    text: JSON.stringify({
      tool: "readFile",
      path: "src/a.ts",
      content: "/p/src/a.ts",
      operationIsLocatedInWorkspace: true,
    }),
  });
  for (const e of o.extra ?? []) out.push({ ts: ++ts, ...e });
  while (o.padTo && out.length < o.padTo - 1)
    out.push({ ts: ++ts, type: "say", say: "text", text: `Step ${out.length}: ${"lorem ipsum ".repeat(20)}` });
  out.push({ ts: ts + 1, type: "say", say: "completion_result", text: "The test passes now.HAS_CHANGES" });
  if (o.deletedRange) for (const m of out.slice(-3)) m.conversationHistoryDeletedRange = o.deletedRange;
  return out;
}

export function legacyConversation(task: string, model: string): unknown[] {
  const modelInfo = { modelId: model, providerId: "anthropic", mode: "act" };
  return [
    {
      role: "user",
      content: [
        { type: "text", text: `<task>\n${task}\n</task>` },
        { type: "text", text: "<environment_details>\n# Current Working Directory\n</environment_details>" },
      ],
      ts: T0,
    },
    {
      role: "assistant",
      content: [{ type: "text", text: "I will read the file." }],
      modelInfo,
      metrics: { tokens: { prompt: 107, completion: 20, cached: 7 }, cost: 0.01 },
      ts: T0 + 1,
    },
    {
      role: "user",
      content: [
        { type: "text", text: "[read_file for 'src/a.ts'] Result:" },
        { type: "text", text: "export const a = 1;" },
      ],
      ts: T0 + 2,
    },
    { role: "assistant", content: [{ type: "text", text: "The test passes now." }], modelInfo, ts: T0 + 3 },
  ];
}

/** `<root>/state/taskHistory.json`: Cline rewrites the whole array; this replaces or adds items. */
export function writeHistoryItems(root: string, added: Record<string, unknown>[]): void {
  const file = path.join(root, "state", "taskHistory.json");
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const items = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>[]) : [];
  const ids = new Set(added.map((i) => i.id));
  fs.writeFileSync(file, JSON.stringify([...added, ...items.filter((i) => !ids.has(i.id))]));
}

/** The history item Cline keeps for a task (message-state's saveClineMessagesAndUpdateHistory). */
export function historyItem(
  taskId: string,
  ui: Record<string, unknown>[],
  o: LegacyTaskOptions,
): Record<string, unknown> {
  const totals = usageTotals(o.usages ?? [{ tokensIn: 100, tokensOut: 20, cacheWrites: 5, cacheReads: 7, cost: 0.01 }]);
  return {
    id: taskId,
    ulid: `01J${taskId.replace(/\W/g, "").slice(0, 20).toUpperCase().padEnd(23, "0")}`,
    ts: ui[ui.length - 1]?.ts ?? T0,
    task: o.task ?? "Fix the failing test",
    tokensIn: totals.tokensIn,
    tokensOut: totals.tokensOut,
    cacheWrites: totals.cacheWrites,
    cacheReads: totals.cacheReads,
    totalCost: totals.cost,
    size: 4096,
    shadowGitConfigWorkTree: o.cwd ?? undefined,
    cwdOnTaskInitialization: o.cwd ?? undefined,
    conversationHistoryDeletedRange: o.deletedRange,
    isFavorited: o.favorite ?? false,
    modelId: o.model ?? "claude-sonnet-4-5",
  };
}

/** Writes `<root>/tasks/<taskId>/` and its history item, and returns its folder. */
export function writeLegacyTask(root: string, taskId: string, o: LegacyTaskOptions = {}): string {
  const dir = path.join(root, "tasks", taskId);
  fs.mkdirSync(dir, { recursive: true });
  const task = o.task ?? "Fix the failing test";
  const ui = path.join(dir, o.uiFile ?? "ui_messages.json");
  const uiMessages = legacyUiMessages(o);
  fs.writeFileSync(ui, o.rawUi ?? JSON.stringify(uiMessages));
  if (o.rawConversation !== undefined)
    fs.writeFileSync(path.join(dir, "api_conversation_history.json"), o.rawConversation);
  else if (o.conversation !== false) {
    fs.writeFileSync(
      path.join(dir, "api_conversation_history.json"),
      JSON.stringify(o.conversation ?? legacyConversation(task, o.model ?? "claude-sonnet-4-5")),
    );
  }
  if (o.contextHistory !== undefined)
    fs.writeFileSync(path.join(dir, "context_history.json"), JSON.stringify(o.contextHistory));
  if (o.metadata !== undefined)
    fs.writeFileSync(
      path.join(dir, "task_metadata.json"),
      typeof o.metadata === "string" ? o.metadata : JSON.stringify(o.metadata),
    );
  if (o.cwd !== null)
    writeHistoryItems(root, [historyItem(taskId, uiMessages, { ...o, cwd: o.cwd ?? "/home/user/project" })]);
  if (o.mtime) fs.utimesSync(ui, o.mtime, o.mtime);
  return dir;
}

/** context_history.json replacing the text of block `block` of message `index` (ContextManager's format). */
export function contextTextEdit(index: number, block: number, text: string, ts = T0): unknown[] {
  return [[index, [0, [[block, [[ts, "text", [text], []]]]]]]];
}

export interface SessionOptions {
  /** The manifest object; null writes none; a string is written raw. */
  manifest?: Record<string, unknown> | null | string;
  messages?: unknown[];
  /** Raw messages document text. */
  rawMessages?: string;
  /** `<agentId>` or `<agentId>__<teamTaskId>` files written beside the lead's messages. */
  subagents?: string[];
  cwd?: string;
  /** metadata entries added to the default manifest. */
  metadata?: Record<string, unknown>;
}

export function sessionManifest(id: string, cwd: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const { metadata, ...rest } = extra as { metadata?: Record<string, unknown> };
  return {
    version: 1,
    session_id: id,
    source: "cli",
    pid: 4242,
    started_at: new Date(T0).toISOString(),
    ended_at: new Date(T0 + 60_000).toISOString(),
    exit_code: 0,
    status: "completed",
    interactive: true,
    provider: "anthropic",
    model: "claude-opus-4",
    cwd,
    workspace_root: cwd,
    enable_tools: true,
    enable_spawn: true,
    enable_teams: false,
    metadata: {
      title: `Session ${id}`,
      source: "cli",
      sessionHistoryOrigin: { mode: "act", version: "3.0.0" },
      ...metadata,
    },
    messages_path: `/somewhere/else/${id}.messages.json`,
    ...rest,
  };
}

/** An assistant message as Cline 4 stores it. */
export function sessionAssistant(
  id: string,
  ts: number,
  content: unknown[],
  metrics?: Record<string, number>,
  model = "claude-opus-4",
): Record<string, unknown> {
  return {
    id,
    role: "assistant",
    ts,
    modelInfo: { id: model, provider: "anthropic", family: "claude-opus" },
    ...(metrics ? { metrics } : {}),
    content,
  };
}

export function sessionMessages(task = "Add a README"): unknown[] {
  return [
    {
      id: "msg_u1",
      role: "user",
      ts: T0,
      content: [
        {
          type: "text",
          text: `<user_input mode="act">${task}</user_input>\n<file_content path="a.md">attached</file_content>`,
        },
      ],
    },
    sessionAssistant(
      "msg_a1",
      T0 + 1000,
      [
        { type: "text", text: "I will write the README." },
        { type: "tool_use", id: "toolu_1", name: "write_to_file", input: { path: "README.md", content: "# hi\n" } },
      ],
      { inputTokens: 300, outputTokens: 40, cacheReadTokens: 10, cacheWriteTokens: 2, cost: 0.02 },
    ),
    {
      id: "msg_u2_tool_toolu_1",
      role: "user",
      ts: T0 + 1001,
      content: [{ type: "tool_result", tool_use_id: "toolu_1", name: "write_to_file", content: "written" }],
    },
    {
      id: "msg_u3",
      role: "user",
      ts: T0 + 1002,
      content: [{ type: "text", text: "Hook output: lint ok" }],
      displayRole: "status",
    },
    {
      id: "msg_a2",
      role: "assistant",
      ts: T0 + 1003,
      content: [{ type: "text", text: "Request failed, retrying" }],
      displayOnly: true,
    },
    sessionAssistant("msg_a3", T0 + 2000, [{ type: "text", text: "README written." }], {
      inputTokens: 400,
      outputTokens: 10,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      cost: 0.01,
    }),
  ];
}

export function sessionDocument(id: string, messages: unknown[], updatedAt = T0 + 60_000): string {
  return JSON.stringify(
    { version: 1, updated_at: new Date(updatedAt).toISOString(), agent: "lead", sessionId: id, messages },
    null,
    "\t",
  );
}

/** Writes `<sessionsDir>/<id>/` and returns its folder. */
export function writeSession(sessionsDir: string, id: string, o: SessionOptions = {}): string {
  const dir = path.join(sessionsDir, id);
  fs.mkdirSync(dir, { recursive: true });
  const manifest =
    o.manifest === undefined
      ? sessionManifest(id, o.cwd ?? "/home/user/project", { metadata: o.metadata ?? {} })
      : o.manifest;
  if (typeof manifest === "string") fs.writeFileSync(path.join(dir, `${id}.json`), manifest);
  else if (manifest !== null)
    fs.writeFileSync(
      path.join(dir, `${id}.json`),
      JSON.stringify({ ...manifest, messages_path: path.join(dir, `${id}.messages.json`) }, null, "\t"),
    );
  fs.writeFileSync(
    path.join(dir, `${id}.messages.json`),
    o.rawMessages ?? sessionDocument(id, o.messages ?? sessionMessages()),
  );
  for (const sub of o.subagents ?? []) {
    fs.writeFileSync(
      path.join(dir, `${sub}.messages.json`),
      JSON.stringify({
        version: 1,
        agent: sub.includes("__") ? "teammate" : "subagent",
        sessionId: id,
        messages: sessionMessages("sub prompt"),
      }),
    );
  }
  return dir;
}

/**
 * A legacy task that Cline 4 resumed (and went on with): the session has the task's id, its
 * manifest carries the history item's totals with legacyTask set, and its messages are the
 * legacy conversation converted, the last legacy assistant message carrying the legacy totals
 * as its metrics, Cline's notice, then the session's own turns.
 */
export function writeMigratedSession(
  sessionsDir: string,
  taskId: string,
  legacy: { task: string; usages: UsageFixture[]; model?: string },
  own: unknown[],
  cwd: string,
): string {
  const totals = usageTotals(legacy.usages);
  const model = legacy.model ?? "claude-sonnet-4-5";
  const converted: Record<string, unknown>[] = (
    legacyConversation(legacy.task, model) as Record<string, unknown>[]
  ).map(({ role, content }) => ({ role, content }));
  const lastAssistant = converted.length - 1;
  converted[lastAssistant] = {
    ...converted[lastAssistant],
    metrics: {
      inputTokens: totals.tokensIn + totals.cacheReads + totals.cacheWrites,
      outputTokens: totals.tokensOut,
      cacheReadTokens: totals.cacheReads,
      cacheWriteTokens: totals.cacheWrites,
      cost: totals.cost,
    },
    modelInfo: { id: model, provider: "unknown" },
  };
  const messages = [...converted, { role: "user", content: LEGACY_RESUME_WARNING }, ...own];
  const metadata = {
    title: legacy.task,
    isFavorited: false,
    size: 4096,
    totalCost: totals.cost,
    tokensIn: totals.tokensIn,
    tokensOut: totals.tokensOut,
    cacheWrites: totals.cacheWrites,
    cacheReads: totals.cacheReads,
    modelId: model,
    legacyTask: true,
  };
  return writeSession(sessionsDir, taskId, {
    manifest: {
      ...sessionManifest(taskId, cwd),
      source: "vscode",
      started_at: new Date(T0 + 3_600_000).toISOString(),
      metadata,
    },
    messages,
  });
}

/** Every file and folder under `dir` with its bytes' hash, size, mode, inode and times (read-only check). */
export function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const st = fs.lstatSync(p);
      const stamp = `${st.mtimeMs} ${st.ctimeMs} ${st.mode} ${st.ino}`;
      if (e.isDirectory()) {
        out[path.relative(dir, p) + "/"] = `dir ${stamp}`;
        walk(p);
      } else
        out[path.relative(dir, p)] =
          `${createHash("sha256").update(fs.readFileSync(p)).digest("hex")} ${st.size} ${stamp}`;
    }
  };
  walk(dir);
  return out;
}

/** Runs `fn` and checks that nothing under `dir` (the Cline roots) changed: bytes, sizes, modes, inodes, times. */
export async function readOnly<T>(dir: string, fn: () => Promise<T> | T): Promise<T> {
  const before = snapshotTree(dir);
  const result = await fn();
  const after = snapshotTree(dir);
  if (JSON.stringify(after) !== JSON.stringify(before)) {
    const changed = Object.keys({ ...before, ...after }).filter((k) => before[k] !== after[k]);
    throw new Error(`the import changed the Cline tree: ${changed.slice(0, 10).join(", ")}`);
  }
  return result;
}
