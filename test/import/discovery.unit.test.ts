import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  describeCandidate,
  discoveryContext,
  listCandidates,
  resolveClineRoots,
  type ClineItem,
  type ParsedClineItem,
} from "../../core/src/import/index.js";
import {
  clineHomeData,
  contextTextEdit,
  legacyConversation,
  sessionAssistant,
  sessionManifest,
  sessionMessages,
  snapshotTree,
  T0,
  vscodeGlobalStorage,
  writeLegacyTask,
  writeMigratedSession,
  writeSession,
} from "./fixtures.js";
import { nth } from "../helpers/items.js";

const temps: string[] = [];
afterEach(() => {
  for (const t of temps.splice(0)) fs.rmSync(t, { recursive: true, force: true });
});

function tempHome(): string {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-cline-"));
  temps.push(base);
  return base;
}

/** Discovery of everything under HOME, checked to leave the Cline tree exactly as it was. */
function described(env: NodeJS.ProcessEnv): { item: ClineItem; parsed?: ParsedClineItem }[] {
  const before = snapshotTree(env.HOME!);
  const ctx = discoveryContext(resolveClineRoots(env, "linux"));
  const out = listCandidates(ctx.roots).candidates.map((c) => describeCandidate(c, ctx));
  expect(snapshotTree(env.HOME!)).toEqual(before);
  return out;
}

function discover(env: NodeJS.ProcessEnv): ClineItem[] {
  return described(env).map((d) => d.item);
}

function byKey(items: ClineItem[], key: string): ClineItem {
  const item = items.find((i) => i.sourceKey === key);
  if (!item) throw new Error(`no item ${key} in ${items.map((i) => i.sourceKey).join(", ")}`);
  return item;
}

function parsedOf(env: NodeJS.ProcessEnv, key: string): ParsedClineItem {
  const found = described(env).find((d) => d.item.sourceKey === key);
  if (!found?.parsed) throw new Error(`${key} was not parsed: ${found?.item.skip?.reason ?? "not found"}`);
  return found.parsed;
}

describe("Cline roots", () => {
  it("lists the three VS Code variants per platform and ~/.cline/data", () => {
    const linux = resolveClineRoots({ HOME: "/h" }, "linux");
    expect(linux.legacyRoots.map((r) => r.dir)).toEqual([
      "/h/.config/Code/User/globalStorage/saoudrizwan.claude-dev",
      "/h/.config/Code - Insiders/User/globalStorage/saoudrizwan.claude-dev",
      "/h/.config/VSCodium/User/globalStorage/saoudrizwan.claude-dev",
      "/h/.cline/data",
    ]);
    expect(linux.sessionsDir).toBe("/h/.cline/data/sessions");
    expect(linux.chatWorkspaceDir).toBe("/h/.cline/data/workspaces/chat");
    const mac = resolveClineRoots({ HOME: "/Users/u" }, "darwin");
    expect(nth(mac.legacyRoots, 0, "legacy root").dir).toBe(
      "/Users/u/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev",
    );
    const win = resolveClineRoots({ USERPROFILE: "C:\\Users\\u", APPDATA: "C:\\Users\\u\\AppData\\Roaming" }, "win32");
    expect(nth(win.legacyRoots, 1, "legacy root").dir).toBe(
      "C:\\Users\\u\\AppData\\Roaming\\Code - Insiders\\User\\globalStorage\\saoudrizwan.claude-dev",
    );
    expect(win.dataDir).toBe("C:\\Users\\u\\.cline\\data");
  });

  it("resolves CLINE_SESSION_DATA_DIR, CLINE_DATA_DIR and CLINE_DIR trimmed, empty meaning unset", () => {
    expect(resolveClineRoots({ HOME: "/h", CLINE_DIR: "  /c  " }, "linux").sessionsDir).toBe("/c/data/sessions");
    expect(resolveClineRoots({ HOME: "/h", CLINE_DIR: "/c", CLINE_DATA_DIR: " /d " }, "linux").sessionsDir).toBe(
      "/d/sessions",
    );
    expect(
      resolveClineRoots({ HOME: "/h", CLINE_DATA_DIR: "/d", CLINE_SESSION_DATA_DIR: "/s\n" }, "linux").sessionsDir,
    ).toBe("/s");
    const empty = resolveClineRoots(
      { HOME: "/h", CLINE_DIR: "", CLINE_DATA_DIR: "   ", CLINE_SESSION_DATA_DIR: "" },
      "linux",
    );
    expect(empty.dataDir).toBe("/h/.cline/data");
    expect(empty.sessionsDir).toBe("/h/.cline/data/sessions");
  });
});

describe("legacy task discovery", () => {
  it("finds tasks in every root, keeps the newest ui_messages.json of a duplicate, reports the others", () => {
    const home = tempHome();
    writeLegacyTask(vscodeGlobalStorage(home, "Code"), "1001", { task: "old copy", mtime: new Date(T0) });
    writeLegacyTask(vscodeGlobalStorage(home, "VSCodium"), "1001", { task: "new copy", mtime: new Date(T0 + 60_000) });
    writeLegacyTask(vscodeGlobalStorage(home, "Code - Insiders"), "1002", { task: "insiders task" });
    writeLegacyTask(clineHomeData(home), "1003", { task: "cli task" });
    fs.mkdirSync(path.join(clineHomeData(home), "tasks", "1004"), { recursive: true }); // no ui_messages.json: not a task
    const items = discover({ HOME: home });
    expect(items.map((i) => i.sourceKey).sort()).toEqual([
      "legacy:1001",
      "legacy:1001@Code",
      "legacy:1002",
      "legacy:1003",
    ]);
    const winner = byKey(items, "legacy:1001");
    expect(winner.title).toBe("new copy");
    expect(winner.root).toBe(vscodeGlobalStorage(home, "VSCodium"));
    expect(winner.skip).toBeUndefined();
    const dup = byKey(items, "legacy:1001@Code");
    expect(dup.skip?.code).toBe("duplicate");
    expect(dup.skip?.reason).toContain(path.join(vscodeGlobalStorage(home, "VSCodium"), "tasks", "1001"));
    expect(byKey(items, "legacy:1003").root).toBe(clineHomeData(home));
  });

  it("reads usage from api_req_started, models from the conversation and metadata, and says what is not carried over", () => {
    const home = tempHome();
    const root = vscodeGlobalStorage(home, "Code");
    writeLegacyTask(root, "2001", {
      task: "Refactor the parser\nwith details",
      usages: [
        { tokensIn: 100, tokensOut: 20, cacheWrites: 5, cacheReads: 7, cost: 0.01 },
        { tokensIn: 200, tokensOut: 30, cacheWrites: 0, cacheReads: 70, cost: 0.02 },
      ],
      model: "claude-3-7-sonnet",
      metadata: {
        files_in_context: [],
        model_usage: [{ ts: T0, model_id: "gpt-4.1", model_provider_id: "openai", mode: "plan" }],
      },
      extra: [
        { type: "say", say: "user_feedback", text: "look", images: ["data:image/png;base64,AAAA"] },
        { type: "say", say: "checkpoint_created", lastCheckpointHash: "abc" },
        { type: "ask", ask: "browser_action_launch", text: "http://localhost" },
        { type: "say", say: "brand_new_kind", text: "?" },
      ],
    });
    const item = byKey(discover({ HOME: home }), "legacy:2001");
    expect(item.title).toBe("Refactor the parser");
    expect(item.usage).toEqual({ tokensIn: 300, tokensOut: 50, cacheWrites: 5, cacheReads: 77, cost: 0.03 });
    expect(item.models.sort()).toEqual(["claude-3-7-sonnet", "gpt-4.1"]);
    expect(item.taskId).toBe("cline-2001");
    expect(item.startedAt).toBe(T0);
    expect(item.messageCount).toBe(11);

    const parsed = parsedOf({ HOME: home }, "legacy:2001");
    expect(parsed.requests.map((r) => r.key)).toEqual(["cline:2001:0", "cline:2001:1"]);
    const notes = parsed.notCarriedOver.join("\n");
    expect(notes).toMatch(/1 image/);
    expect(notes).toMatch(/checkpoint/);
    expect(notes).toMatch(/browser_action_launch/);
    expect(notes).toMatch(/brand_new_kind/);
    expect(parsed.conversation.map((l) => JSON.parse(l).role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(parsed.status).toBe("completed");
  });

  it("skips a malformed task with its reason and still lists the others", () => {
    const home = tempHome();
    const root = clineHomeData(home);
    const good = JSON.stringify(legacyConversation("x", "m"));
    writeLegacyTask(root, "3001", { rawUi: '[{"ts": 1, "type": "say", "say": "task", "text": "trunc' });
    writeLegacyTask(root, "3002", { rawUi: JSON.stringify([{ type: "say", say: "task", text: "no ts" }]) });
    writeLegacyTask(root, "3003", { rawUi: JSON.stringify({ not: "an array" }) });
    writeLegacyTask(root, "3004", { rawConversation: JSON.stringify([{ role: "robot", content: "?" }]) });
    writeLegacyTask(root, "3005", { rawConversation: `${good.slice(0, -1)}, {"role": "user", "content": [` });
    writeLegacyTask(root, "3006", { metadata: "{broken" });
    writeLegacyTask(root, "3007", {});
    const items = discover({ HOME: home });
    for (const key of ["legacy:3001", "legacy:3002", "legacy:3003", "legacy:3004"]) {
      const item = byKey(items, key);
      expect(item.skip?.code, key).toBe("malformed");
    }
    expect(byKey(items, "legacy:3001").skip?.reason).toMatch(/ui_messages\.json is not valid JSON/);
    expect(byKey(items, "legacy:3002").skip?.reason).toMatch(/entry 1 has no numeric ts/);
    expect(byKey(items, "legacy:3003").skip?.reason).toMatch(/does not hold a JSON array/);
    expect(byKey(items, "legacy:3004").skip?.reason).toMatch(
      /api_conversation_history\.json message 1 has no user\/assistant role/,
    );
    // Cut short after its complete messages: imported from those (see below).
    expect(byKey(items, "legacy:3005").skip).toBeUndefined();
    // A broken task_metadata.json is not required: the task still imports, with a note.
    expect(byKey(items, "legacy:3006").skip).toBeUndefined();
    expect(byKey(items, "legacy:3007").skip).toBeUndefined();
  });

  it("imports what a cut-short api_conversation_history.json holds whole, with a note, when ui_messages.json is intact", () => {
    const home = tempHome();
    const whole = JSON.stringify(legacyConversation("Cut short", "claude-sonnet-4-5"));
    // Cut inside the third message: the first two are whole; a bracket inside a string does not count.
    const cut = whole.slice(0, whole.indexOf("[read_file for") + 20);
    writeLegacyTask(clineHomeData(home), "3101", { task: "Cut short", rawConversation: cut });
    const parsed = parsedOf({ HOME: home }, "legacy:3101");
    expect(parsed.item.skip).toBeUndefined();
    expect(parsed.conversation.map((l) => JSON.parse(l).role)).toEqual(["user", "assistant"]);
    expect(parsed.notCarriedOver.join("\n")).toMatch(
      /api_conversation_history\.json was cut short: the model sees its first 2 message\(s\)/,
    );
    expect(parsed.messages.map((m) => m.text)).toContain("Cut short");
  });

  it("lists and reads a task that has only claude_messages.json, the file older versions wrote", () => {
    const home = tempHome();
    writeLegacyTask(vscodeGlobalStorage(home, "Code"), "3201", {
      task: "From the claude era",
      uiFile: "claude_messages.json",
      usageInFinished: true,
    });
    const item = byKey(discover({ HOME: home }), "legacy:3201");
    expect(item.skip).toBeUndefined();
    expect(item.title).toBe("From the claude era");
    expect(item.usage).toEqual({ tokensIn: 100, tokensOut: 20, cacheWrites: 5, cacheReads: 7, cost: 0.01 });
    expect(parsedOf({ HOME: home }, "legacy:3201").notCarriedOver.join("\n")).toMatch(/claude_messages\.json/);
  });

  it("counts usage as Cline does: the usage older versions put in api_req_finished, subagent batches and requests a checkpoint restore removed", () => {
    const home = tempHome();
    const root = clineHomeData(home);
    writeLegacyTask(root, "3301", {
      usages: [
        { tokensIn: 1200, tokensOut: 300, cacheWrites: 400, cacheReads: 0, cost: 0.0375 },
        { tokensIn: 900, tokensOut: 150, cacheWrites: 0, cacheReads: 1600, cost: 0.03 },
      ],
      extra: [
        // What SubagentToolHandler and a checkpoint restore say (their JSON, as Cline writes it).
        {
          type: "say",
          say: "subagent_usage",
          text: JSON.stringify({
            source: "subagents",
            tokensIn: 8000,
            tokensOut: 2100,
            cacheWrites: 3000,
            cacheReads: 12000,
            cost: 0.3126,
          }),
        },
        {
          type: "say",
          say: "deleted_api_reqs",
          text: JSON.stringify({ tokensIn: 5000, tokensOut: 700, cacheWrites: 1000, cacheReads: 4000, cost: 0.18 }),
        },
      ],
    });
    // An older version: api_req_started holds only the request, the numbers follow in api_req_finished.
    writeLegacyTask(root, "3302", {
      usageInFinished: true,
      usages: [
        { tokensIn: 10, tokensOut: 2, cacheWrites: 0, cacheReads: 0, cost: 0.001 },
        { tokensIn: 20, tokensOut: 4, cacheWrites: 0, cacheReads: 0, cost: 0.002 },
      ],
    });
    const items = discover({ HOME: home });
    const a = byKey(items, "legacy:3301");
    expect(a.usage.tokensIn).toBe(1200 + 900 + 8000 + 5000);
    expect(a.usage.tokensOut).toBe(300 + 150 + 2100 + 700);
    expect(a.usage.cacheWrites).toBe(400 + 3000 + 1000);
    expect(a.usage.cacheReads).toBe(1600 + 12000 + 4000);
    expect(a.usage.cost.toFixed(4)).toBe("0.5601");
    const parsed = parsedOf({ HOME: home }, "legacy:3301");
    expect(new Set(parsed.requests.map((r) => r.key)).size).toBe(4);
    expect(parsed.requests.reduce((n, r) => n + r.metrics.cost, 0).toFixed(4)).toBe("0.5601");
    expect(parsed.notCarriedOver.join("\n")).toMatch(/checkpoint restore removed .* counted/);
    const b = byKey(items, "legacy:3302");
    expect(b.usage).toEqual({ tokensIn: 30, tokensOut: 6, cacheWrites: 0, cacheReads: 0, cost: 0.003 });
  });

  it("takes the working folder, the favourite flag and the model from the root's state/taskHistory.json", () => {
    const home = tempHome();
    const root = vscodeGlobalStorage(home, "Code");
    writeLegacyTask(root, "3401", {
      task: "Has a folder",
      cwd: "/home/me/shop",
      favorite: true,
      model: "claude-3-5-sonnet",
    });
    writeLegacyTask(root, "3402", { task: "No history item", cwd: null });
    writeLegacyTask(clineHomeData(home), "3403", { task: "Windows folder", cwd: "C:\\Users\\me\\app" });
    const items = discover({ HOME: home });
    expect(byKey(items, "legacy:3401").workspaceRoot).toBe("/home/me/shop");
    expect(byKey(items, "legacy:3401").workspaceNote).toBe("");
    expect(byKey(items, "legacy:3401").models).toContain("claude-3-5-sonnet");
    expect(parsedOf({ HOME: home }, "legacy:3401").favorite).toBe(true);
    expect(byKey(items, "legacy:3402").workspaceRoot).toBe("");
    expect(byKey(items, "legacy:3402").workspaceNote).toMatch(
      /not in .*taskHistory\.json .*: imported without a workspace/,
    );
    expect(parsedOf({ HOME: home }, "legacy:3402").favorite).toBe(false);
    expect(byKey(items, "legacy:3403").workspaceRoot).toBe("C:\\Users\\me\\app");
  });

  it("journals the conversation Cline would send: its deleted range dropped, orphaned tool results removed, context_history.json's edits applied", () => {
    const home = tempHome();
    const conversation: unknown[] = [
      { role: "user", content: [{ type: "text", text: "<task>\nLong task\n</task>" }] },
      { role: "assistant", content: [{ type: "text", text: "first answer" }] },
    ];
    for (let i = 1; i <= 20; i++) {
      conversation.push({
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: `t${i - 1}`, content: [{ type: "text", text: `result ${i}` }] },
          { type: "text", text: `user ${i}` },
        ],
      });
      conversation.push({
        role: "assistant",
        content: [
          { type: "text", text: `answer ${i}` },
          { type: "tool_use", id: `t${i}`, name: "read_file", input: { path: `f${i}` } },
        ],
      });
    }
    writeLegacyTask(clineHomeData(home), "3501", {
      task: "Long task",
      conversation,
      deletedRange: [2, 31],
      contextHistory: [
        ...contextTextEdit(
          1,
          0,
          "[NOTE] Some previous conversation history with the user has been removed to maintain optimal context window length.",
        ),
        ...contextTextEdit(36, 0, "[[NOTE] This file read has been removed to save space in the context window."),
        ...contextTextEdit(4, 0, "an edit of a dropped message"),
      ],
    });
    const parsed = parsedOf({ HOME: home }, "legacy:3501");
    const sent = parsed.conversation.map(
      (l) =>
        JSON.parse(l) as { role: string; content: { type: string; text?: string; content?: { text: string }[] }[] },
    );
    // Messages 0 and 1, then 32 onwards: 2 + 10.
    expect(sent).toHaveLength(12);
    const texts = sent.map((m) => m.content.map((b) => b.text ?? b.content?.[0]?.text ?? "").join("|"));
    expect(texts[0]).toBe("<task>\nLong task\n</task>");
    expect(texts[1]).toMatch(/^\[NOTE\] Some previous conversation history/);
    // Message 32 (user 16) lost its tool result: its tool call (in message 31) was dropped.
    expect(texts[2]).toBe("user 16");
    expect(texts[3]).toBe("answer 16|");
    expect(texts[6]).toBe("[[NOTE] This file read has been removed to save space in the context window.|user 18");
    expect(texts.join("\n")).not.toMatch(/user 15|answer 15|an edit of a dropped message/);
    expect(parsed.notCarriedOver.join("\n")).toMatch(/30 earlier message\(s\) Cline had already removed/);
    // The UI keeps every message.
    expect(parsed.messages.length).toBe(parsed.item.messageCount);
  });

  it("falls back to the deleted range the UI messages recorded when the history item has none", () => {
    const home = tempHome();
    const conversation = Array.from({ length: 10 }, (_, i) => ({
      role: i % 2 ? "assistant" : "user",
      content: [{ type: "text", text: `m${i}` }],
    }));
    writeLegacyTask(clineHomeData(home), "3601", { conversation, deletedRange: [2, 5], cwd: null });
    const sent = parsedOf({ HOME: home }, "legacy:3601").conversation.map((l) => JSON.parse(l).content[0].text);
    expect(sent).toEqual(["m0", "m1", "m6", "m7", "m8", "m9"]);
  });

  it("shows what Cline stores as JSON as a line a person reads, keeping the JSON in the detail", () => {
    const home = tempHome();
    writeLegacyTask(clineHomeData(home), "3701", {
      usages: [{ tokensIn: 1234, tokensOut: 56, cacheWrites: 0, cacheReads: 0, cost: 0.0123 }],
      extra: [
        { type: "ask", ask: "followup", text: JSON.stringify({ question: "Which file?", options: ["a.ts", "b.ts"] }) },
        {
          type: "say",
          say: "tool",
          text: JSON.stringify({ tool: "searchFiles", path: "src", regex: "TODO", filePattern: "*.ts" }),
        },
      ],
    });
    const messages = parsedOf({ HOME: home }, "legacy:3701").messages;
    const texts = messages.map((m) => m.text);
    expect(texts).toContain("API request: 1,234 tokens in, 56 out, $0.0123");
    expect(texts).toContain("read src/a.ts");
    expect(texts).toContain("Which file?");
    expect(texts).toContain("searched src for /TODO/ in *.ts");
    expect(texts).toContain("The test passes now.");
    expect(texts.some((t) => t.startsWith("{"))).toBe(false);
    const request = messages.find((m) => m.text.startsWith("API request"))!;
    expect(JSON.parse(request.detail).tokensIn).toBe(1234);
  });
});

describe("Cline 4 session discovery", () => {
  it("keys sessions by their full id, skips subagent, teammate and imported files, and reads the workspace from the manifest", () => {
    const home = tempHome();
    const sessions = path.join(clineHomeData(home), "sessions");
    const chat = path.join(clineHomeData(home), "workspaces", "chat");
    // Started in the same millisecond: the same first 13 characters.
    writeSession(sessions, "1717000000000_aaaaa", { cwd: "/work/alpha", subagents: ["agent7", "agent7__team3"] });
    writeSession(sessions, "1717000000000_bbbbb", { cwd: "C:\\Users\\me\\proj" });
    writeSession(sessions, "1717000000001_ccccc", {
      manifest: sessionManifest("1717000000001_ccccc", "/x", { metadata: { importedFrom: "claude-code" } }),
    });
    writeSession(sessions, "1717000000002_ddddd", {
      manifest: sessionManifest("1717000000002_ddddd", "/x", {
        metadata: { historyOrigin: { mode: "import", source: "codex" } },
      }),
    });
    writeSession(sessions, "1717000000003_eeeee", { cwd: chat });
    writeSession(sessions, "1717000000004_fffff", { manifest: null });
    writeSession(sessions, "1717000000005_ggggg", { manifest: "{not json" });
    writeSession(sessions, "1717000000006_hhhhh", { rawMessages: '{"version": 1, "messages": [' });
    writeSession(sessions, "1717000000007_iiiii", {
      rawMessages: JSON.stringify({ version: 1, messages: [{ role: "user", content: 42 }] }),
    });
    const items = discover({ HOME: home });

    const a = byKey(items, "session:1717000000000_aaaaa");
    const b = byKey(items, "session:1717000000000_bbbbb");
    expect(a.taskId).not.toBe(b.taskId);
    expect(a.workspaceRoot).toBe("/work/alpha");
    expect(b.workspaceRoot).toBe("C:\\Users\\me\\proj");
    expect(a.title).toBe("Session 1717000000000_aaaaa");
    expect(a.models).toEqual(["claude-opus-4"]);
    expect(a.usage).toEqual({ tokensIn: 700, tokensOut: 50, cacheReads: 10, cacheWrites: 2, cost: 0.03 });
    // Visible: the typed text, the assistant's text and its tool call, the final answer.
    expect(a.messageCount).toBe(4);
    expect(byKey(items, "session:1717000000000_aaaaa/agent7").skip?.code).toBe("subagent_file");
    expect(byKey(items, "session:1717000000000_aaaaa/agent7__team3").skip?.reason).toMatch(/^teammate file/);
    expect(byKey(items, "session:1717000000001_ccccc").skip?.code).toBe("imported_elsewhere");
    expect(byKey(items, "session:1717000000002_ddddd").skip?.reason).toMatch(/codex/);
    const chatItem = byKey(items, "session:1717000000003_eeeee");
    expect(chatItem.workspaceRoot).toBe("");
    expect(chatItem.workspaceNote).toMatch(/chat workspace/);
    expect(chatItem.skip).toBeUndefined();
    expect(byKey(items, "session:1717000000004_fffff").workspaceNote).toMatch(/no manifest/);
    expect(byKey(items, "session:1717000000004_fffff").skip).toBeUndefined();
    expect(byKey(items, "session:1717000000005_ggggg").workspaceNote).toMatch(/unreadable/);
    expect(byKey(items, "session:1717000000005_ggggg").skip).toBeUndefined();
    expect(byKey(items, "session:1717000000006_hhhhh").skip?.reason).toMatch(/not valid JSON/);
    expect(byKey(items, "session:1717000000007_iiiii").skip?.reason).toMatch(/message 1 has content/);
  });

  it("lists a session folder without its messages file as not importable, and hashes ids that cannot be Dline ids", () => {
    const home = tempHome();
    const sessions = path.join(clineHomeData(home), "sessions");
    const dir = writeSession(sessions, "1717000000000_nomsg", { cwd: "/w" });
    fs.rmSync(path.join(dir, "1717000000000_nomsg.messages.json"));
    writeLegacyTask(clineHomeData(home), "weird id with spaces", {});
    const items = discover({ HOME: home });
    expect(byKey(items, "session:1717000000000_nomsg").skip?.code).toBe("no_messages");
    expect(byKey(items, "legacy:weird id with spaces").taskId).toMatch(/^cline-h[0-9a-f]{32}$/);
  });

  it("reads sessions from CLINE_SESSION_DATA_DIR and ignores messages_path", () => {
    const home = tempHome();
    const custom = path.join(home, "custom-sessions");
    writeSession(custom, "1717000000000_zzzzz", { cwd: "/w" });
    expect(discover({ HOME: home, CLINE_SESSION_DATA_DIR: ` ${custom} ` }).map((i) => i.sourceKey)).toEqual([
      "session:1717000000000_zzzzz",
    ]);
    expect(discover({ HOME: home, CLINE_SESSION_DATA_DIR: "" })).toEqual([]);
  });

  it("reads the model of each message from modelInfo.id, as Cline 4 writes it", () => {
    const home = tempHome();
    const sessions = path.join(clineHomeData(home), "sessions");
    const manifest = sessionManifest("1717000000100_model", "/w", { model: "mistralai/mixtral-8x22b-instruct" });
    writeSession(sessions, "1717000000100_model", {
      manifest,
      messages: [
        { id: "msg_1", role: "user", ts: T0, content: [{ type: "text", text: "hello" }] },
        sessionAssistant(
          "msg_2",
          T0 + 1,
          [{ type: "text", text: "Hello!" }],
          { inputTokens: 12, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0, cost: 0.001 },
          "anthropic/claude-opus-4.8-fast",
        ),
        sessionAssistant(
          "msg_3",
          T0 + 2,
          [{ type: "text", text: "Still here." }],
          undefined,
          "mistralai/voxtral-small-24b-2507",
        ),
      ],
    });
    const item = byKey(discover({ HOME: home }), "session:1717000000100_model");
    expect(item.models.sort()).toEqual([
      "anthropic/claude-opus-4.8-fast",
      "mistralai/mixtral-8x22b-instruct",
      "mistralai/voxtral-small-24b-2507",
    ]);
  });

  it("skips a session whose sessionHistoryOrigin says it was imported into Cline", () => {
    const home = tempHome();
    const sessions = path.join(clineHomeData(home), "sessions");
    writeSession(sessions, "1717000000200_origin", {
      metadata: { sessionHistoryOrigin: { mode: "import", version: "3.1.0", trigger: "claude-code" } },
    });
    writeSession(sessions, "1717000000201_plain", {
      metadata: { sessionHistoryOrigin: { mode: "act", version: "3.1.0" } },
    });
    const items = discover({ HOME: home });
    expect(byKey(items, "session:1717000000200_origin").skip?.code).toBe("imported_elsewhere");
    expect(byKey(items, "session:1717000000200_origin").skip?.reason).toMatch(/claude-code/);
    expect(byKey(items, "session:1717000000201_plain").skip).toBeUndefined();
  });

  it("shows thinking blocks as reasoning and says the model gets a placeholder; keeps Cline's favourite flag", () => {
    const home = tempHome();
    const sessions = path.join(clineHomeData(home), "sessions");
    writeSession(sessions, "1717000000300_think", {
      metadata: { isFavorited: true },
      messages: [
        { id: "msg_user_1", role: "user", content: [{ type: "text", text: "Inspect the README and summarize it." }] },
        sessionAssistant("msg_assistant_1", T0 + 1, [
          { type: "thinking", thinking: "I should read the README first before summarizing." },
          { type: "tool_use", id: "tool-call-1", name: "read_files", input: { path: "/tmp/project/README.md" } },
        ]),
        {
          id: "msg_user_2",
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "tool-call-1", content: "# Project", is_error: false }],
        },
        sessionAssistant(
          "msg_assistant_2",
          T0 + 2,
          [{ type: "text", text: "The README describes a small test fixture project." }],
          { inputTokens: 21, outputTokens: 8, cacheReadTokens: 3, cacheWriteTokens: 1, cost: 0.13 },
        ),
      ],
    });
    writeSession(sessions, "1717000000301_pinned", { metadata: { pinned: true } });
    const parsed = parsedOf({ HOME: home }, "session:1717000000300_think");
    expect(parsed.messages.map((m) => [m.kind, m.text])).toEqual([
      ["text", "Inspect the README and summarize it."],
      ["reasoning", "I should read the README first before summarizing."],
      ["tool", "read_files"],
      ["text", "The README describes a small test fixture project."],
    ]);
    expect(parsed.notCarriedOver.join("\n")).toMatch(/1 thinking block\(s\): shown as reasoning/);
    expect(parsed.favorite).toBe(true);
    expect(parsedOf({ HOME: home }, "session:1717000000301_pinned").favorite).toBe(true);
  });

  it("dates subagent and teammate files by their own messages, not by when the file was made", () => {
    const home = tempHome();
    const sessions = path.join(clineHomeData(home), "sessions");
    const dir = writeSession(sessions, "1717000000400_lead", { cwd: "/w" });
    const sub = (ts: number) =>
      JSON.stringify({
        version: 1,
        updated_at: new Date(ts + 5000).toISOString(),
        agent: "subagent",
        sessionId: "1717000000400_lead",
        messages: [
          { id: "m1", role: "user", ts, content: [{ type: "text", text: "look around" }] },
          sessionAssistant("m2", ts + 3000, [{ type: "text", text: "done" }]),
        ],
      });
    fs.writeFileSync(path.join(dir, "agent_1.messages.json"), sub(T0 + 10_000));
    fs.writeFileSync(path.join(dir, "agent_2__team_1.messages.json"), sub(T0 + 20_000));
    const items = discover({ HOME: home });
    expect(byKey(items, "session:1717000000400_lead/agent_1").startedAt).toBe(T0 + 10_000);
    expect(byKey(items, "session:1717000000400_lead/agent_1").updatedAt).toBe(T0 + 15_000);
    expect(byKey(items, "session:1717000000400_lead/agent_2__team_1").startedAt).toBe(T0 + 20_000);
  });

  it("imports a legacy task Cline 4 resumed as one task: the legacy messages, then the session's own turns, each usage counted once", () => {
    const home = tempHome();
    const data = clineHomeData(home);
    const legacyUsages = [
      { tokensIn: 2000, tokensOut: 400, cacheWrites: 1000, cacheReads: 0, cost: 0.0459 },
      { tokensIn: 300, tokensOut: 200, cacheWrites: 0, cacheReads: 3000, cost: 0.033 },
    ];
    writeLegacyTask(data, "1719000000000", {
      task: "Port the build to esbuild",
      usages: legacyUsages,
      cwd: "/home/me/app",
    });
    writeMigratedSession(
      path.join(data, "sessions"),
      "1719000000000",
      { task: "Port the build to esbuild", usages: legacyUsages },
      [
        {
          id: "msg_r1",
          role: "user",
          ts: T0 + 3_700_000,
          content: [{ type: "text", text: '<user_input mode="act">Now the tests too</user_input>' }],
        },
        sessionAssistant("msg_r2", T0 + 3_705_000, [{ type: "text", text: "Tests ported." }], {
          inputTokens: 5000,
          outputTokens: 300,
          cacheReadTokens: 4000,
          cacheWriteTokens: 0,
          cost: 0.0822,
        }),
      ],
      "/home/me/app",
    );
    const items = discover({ HOME: home });
    expect(byKey(items, "legacy:1719000000000").skip?.code).toBe("migrated");
    expect(byKey(items, "legacy:1719000000000").skip?.reason).toMatch(/session:1719000000000/);
    const session = byKey(items, "session:1719000000000");
    expect(session.skip).toBeUndefined();
    expect(session.usage.cost.toFixed(4)).toBe("0.1611");
    expect(session.usage.tokensIn).toBe(2000 + 300 + 5000);
    expect(session.workspaceRoot).toBe("/home/me/app");
    const parsed = parsedOf({ HOME: home }, "session:1719000000000");
    const texts = parsed.messages.map((m) => m.text);
    expect(texts[0]).toBe("Port the build to esbuild");
    expect(texts.slice(-2)).toEqual(["Now the tests too", "Tests ported."]);
    expect(texts.filter((t) => t === "Port the build to esbuild")).toHaveLength(1);
    expect(texts.join("\n")).not.toMatch(/<task>|<environment_details>|legacy conversation/);
    expect(parsed.requests.map((r) => r.key)).toEqual([
      "cline:1719000000000:0",
      "cline:1719000000000:1",
      "cline:session:1719000000000:1",
    ]);
    // The model continues from the session's conversation (Cline 4 already cut it).
    expect(parsed.conversation.some((l) => l.includes("Now the tests too"))).toBe(true);
  });

  it("reads a resumed legacy task's session alone as Cline shows it: the words inside <task> and <feedback>, no environment details, no notice", () => {
    const home = tempHome();
    const usages = [{ tokensIn: 100, tokensOut: 20, cacheWrites: 0, cacheReads: 0, cost: 0.05 }];
    writeMigratedSession(
      path.join(clineHomeData(home), "sessions"),
      "1719000000500",
      { task: "Fix the login form", usages },
      [
        {
          id: "msg_f",
          role: "user",
          ts: T0 + 3_700_000,
          content: [
            { type: "text", text: "[attempt_completion] Result:" },
            {
              type: "text",
              text: "The user has provided feedback on the results.\n<feedback>\nAlso the signup form\n</feedback>",
            },
            { type: "text", text: "<environment_details>\n# Time\n</environment_details>" },
          ],
        },
        sessionAssistant("msg_g", T0 + 3_705_000, [{ type: "text", text: "Both fixed." }], {
          inputTokens: 10,
          outputTokens: 5,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          cost: 0.01,
        }),
      ],
      "/home/me/site",
    );
    const parsed = parsedOf({ HOME: home }, "session:1719000000500");
    const users = parsed.messages.filter((m) => m.role === "user").map((m) => m.text);
    expect(users).toEqual(["Fix the login form", "Also the signup form"]);
    // Alone, the session counts what Cline counts for it: the legacy totals it carries, then its own.
    expect(parsed.item.usage.cost.toFixed(2)).toBe("0.06");
  });

  it("reads nothing but never changes the Cline tree", () => {
    const home = tempHome();
    writeLegacyTask(vscodeGlobalStorage(home, "Code"), "4001", {});
    writeSession(path.join(clineHomeData(home), "sessions"), "1717000000000_qqqqq", {
      messages: sessionMessages(),
      subagents: ["a1"],
    });
    const before = snapshotTree(home);
    discover({ HOME: home });
    expect(snapshotTree(home)).toEqual(before);
  });
});
