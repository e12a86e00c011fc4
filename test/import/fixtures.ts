/**
 * Builds Cline data in temp folders, in the formats of specs/cline-import.md: legacy task
 * folders (ui_messages.json, api_conversation_history.json, task_metadata.json) under any root,
 * and Cline 4 session folders (manifest, messages document, subagent and teammate files).
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";

export const T0 = 1_717_000_000_000; // fixed start time: runs are deterministic

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
  /** Extra ui messages appended before the completion. */
  extra?: Record<string, unknown>[];
  /** The model recorded on assistant messages of the conversation. */
  model?: string;
  conversation?: unknown[] | false;
  metadata?: unknown;
  /** Modification time of ui_messages.json. */
  mtime?: Date;
  /** Raw ui_messages.json text (malformed fixtures). */
  rawUi?: string;
  rawConversation?: string;
  /** Pads the task to this many ui messages (benchmarks, large tasks). */
  padTo?: number;
}

export function legacyUiMessages(o: LegacyTaskOptions = {}): Record<string, unknown>[] {
  const task = o.task ?? "Fix the failing test";
  const usages = o.usages ?? [{ tokensIn: 100, tokensOut: 20, cacheWrites: 5, cacheReads: 7, cost: 0.01 }];
  const out: Record<string, unknown>[] = [{ ts: T0, type: "say", say: "task", text: task }];
  let ts = T0;
  for (const u of usages) {
    out.push({ ts: ++ts, type: "say", say: "api_req_started", text: JSON.stringify({ request: "…", ...u }) });
    out.push({ ts: ++ts, type: "say", say: "text", text: `Working on it (${ts}).` });
  }
  out.push({ ts: ++ts, type: "ask", ask: "tool", text: JSON.stringify({ tool: "readFile", path: "src/a.ts", content: "/p/src/a.ts" }) });
  for (const e of o.extra ?? []) out.push({ ts: ++ts, ...e });
  while (o.padTo && out.length < o.padTo - 1) out.push({ ts: ++ts, type: "say", say: "text", text: `Step ${out.length}: ${"lorem ipsum ".repeat(20)}` });
  out.push({ ts: ++ts, type: "say", say: "completion_result", text: "The test passes now." });
  return out;
}

export function legacyConversation(task: string, model: string): unknown[] {
  return [
    { role: "user", content: [{ type: "text", text: `<task>\n${task}\n</task>` }] },
    { role: "assistant", content: [{ type: "text", text: "I will read the file." }], modelInfo: { modelId: model, providerId: "anthropic", mode: "act" } },
    { role: "user", content: [{ type: "text", text: "[read_file for 'src/a.ts'] Result: export const a = 1;" }] },
    { role: "assistant", content: [{ type: "text", text: "The test passes now." }], modelInfo: { modelId: model, providerId: "anthropic", mode: "act" } },
  ];
}

/** Writes `<root>/tasks/<taskId>/` and returns its folder. */
export function writeLegacyTask(root: string, taskId: string, o: LegacyTaskOptions = {}): string {
  const dir = path.join(root, "tasks", taskId);
  fs.mkdirSync(dir, { recursive: true });
  const task = o.task ?? "Fix the failing test";
  const ui = path.join(dir, "ui_messages.json");
  fs.writeFileSync(ui, o.rawUi ?? JSON.stringify(legacyUiMessages(o)));
  if (o.rawConversation !== undefined) fs.writeFileSync(path.join(dir, "api_conversation_history.json"), o.rawConversation);
  else if (o.conversation !== false) {
    fs.writeFileSync(path.join(dir, "api_conversation_history.json"), JSON.stringify(o.conversation ?? legacyConversation(task, o.model ?? "claude-sonnet-4-5")));
  }
  if (o.metadata !== undefined) fs.writeFileSync(path.join(dir, "task_metadata.json"), typeof o.metadata === "string" ? o.metadata : JSON.stringify(o.metadata));
  if (o.mtime) fs.utimesSync(ui, o.mtime, o.mtime);
  return dir;
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
}

export function sessionManifest(id: string, cwd: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    session_id: id,
    source: "cli",
    started_at: new Date(T0).toISOString(),
    status: "completed",
    cwd,
    workspace_root: cwd,
    metadata: { title: `Session ${id}` },
    messages_path: `/somewhere/else/${id}.messages.json`,
    ...extra,
  };
}

export function sessionMessages(task = "Add a README"): unknown[] {
  return [
    { role: "user", content: [{ type: "text", text: `<user_input mode="act">${task}</user_input>\n<file_content path="a.md">attached</file_content>` }] },
    {
      role: "assistant",
      content: [
        { type: "text", text: "I will write the README." },
        { type: "tool_use", id: "toolu_1", name: "write_to_file", input: { path: "README.md", content: "# hi\n" } },
      ],
      model: "claude-opus-4",
      usage: { inputTokens: 300, outputTokens: 40, cacheReadTokens: 10, cacheWriteTokens: 2, cost: 0.02 },
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "written" }] },
    { role: "user", content: [{ type: "text", text: "Hook output: lint ok" }], displayRole: "status" },
    { role: "assistant", content: [{ type: "text", text: "Request failed, retrying" }], displayOnly: true },
    { role: "assistant", content: [{ type: "text", text: "README written." }], model: "claude-opus-4", usage: { inputTokens: 400, outputTokens: 10, cost: 0.01 } },
  ];
}

/** Writes `<sessionsDir>/<id>/` and returns its folder. */
export function writeSession(sessionsDir: string, id: string, o: SessionOptions = {}): string {
  const dir = path.join(sessionsDir, id);
  fs.mkdirSync(dir, { recursive: true });
  const manifest = o.manifest === undefined ? sessionManifest(id, o.cwd ?? "/home/user/project") : o.manifest;
  if (typeof manifest === "string") fs.writeFileSync(path.join(dir, `${id}.json`), manifest);
  else if (manifest !== null) fs.writeFileSync(path.join(dir, `${id}.json`), JSON.stringify(manifest));
  const doc = o.rawMessages ?? JSON.stringify({ version: 1, sessionId: id, agent: "lead", messages: o.messages ?? sessionMessages() });
  fs.writeFileSync(path.join(dir, `${id}.messages.json`), doc);
  for (const sub of o.subagents ?? []) {
    fs.writeFileSync(path.join(dir, `${sub}.messages.json`), JSON.stringify({ version: 1, sessionId: id, agent: sub, messages: sessionMessages("sub prompt") }));
  }
  return dir;
}

/** Every file and folder under `dir` with its bytes' hash and modification time (read-only check). */
export function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      const st = fs.lstatSync(p);
      if (e.isDirectory()) {
        out[path.relative(dir, p) + "/"] = `dir ${st.mtimeMs} ${st.mode}`;
        walk(p);
      } else out[path.relative(dir, p)] = `${createHash("sha256").update(fs.readFileSync(p)).digest("hex")} ${st.mtimeMs} ${st.size} ${st.mode}`;
    }
  };
  walk(dir);
  return out;
}
