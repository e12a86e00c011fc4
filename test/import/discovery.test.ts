import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { describeCandidate, listCandidates, resolveClineRoots, type ClineItem } from "../../core/src/import/index.js";
import {
  clineHomeData,
  legacyConversation,
  sessionManifest,
  sessionMessages,
  snapshotTree,
  T0,
  vscodeGlobalStorage,
  writeLegacyTask,
  writeSession,
} from "./fixtures.js";

const temps: string[] = [];
afterEach(() => {
  for (const t of temps.splice(0)) fs.rmSync(t, { recursive: true, force: true });
});

function tempHome(): string {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-cline-"));
  temps.push(base);
  return base;
}

function discover(env: NodeJS.ProcessEnv): ClineItem[] {
  const roots = resolveClineRoots(env, "linux");
  return listCandidates(roots).candidates.map((c) => describeCandidate(c, roots).item);
}

function byKey(items: ClineItem[], key: string): ClineItem {
  const item = items.find((i) => i.sourceKey === key);
  if (!item) throw new Error(`no item ${key} in ${items.map((i) => i.sourceKey).join(", ")}`);
  return item;
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
    expect(mac.legacyRoots[0].dir).toBe("/Users/u/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev");
    const win = resolveClineRoots({ USERPROFILE: "C:\\Users\\u", APPDATA: "C:\\Users\\u\\AppData\\Roaming" }, "win32");
    expect(win.legacyRoots[1].dir).toBe("C:\\Users\\u\\AppData\\Roaming\\Code - Insiders\\User\\globalStorage\\saoudrizwan.claude-dev");
    expect(win.dataDir).toBe("C:\\Users\\u\\.cline\\data");
  });

  it("resolves CLINE_SESSION_DATA_DIR, CLINE_DATA_DIR and CLINE_DIR trimmed, empty meaning unset", () => {
    expect(resolveClineRoots({ HOME: "/h", CLINE_DIR: "  /c  " }, "linux").sessionsDir).toBe("/c/data/sessions");
    expect(resolveClineRoots({ HOME: "/h", CLINE_DIR: "/c", CLINE_DATA_DIR: " /d " }, "linux").sessionsDir).toBe("/d/sessions");
    expect(resolveClineRoots({ HOME: "/h", CLINE_DATA_DIR: "/d", CLINE_SESSION_DATA_DIR: "/s\n" }, "linux").sessionsDir).toBe("/s");
    const empty = resolveClineRoots({ HOME: "/h", CLINE_DIR: "", CLINE_DATA_DIR: "   ", CLINE_SESSION_DATA_DIR: "" }, "linux");
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
    expect(items.map((i) => i.sourceKey).sort()).toEqual(["legacy:1001", "legacy:1001@Code", "legacy:1002", "legacy:1003"]);
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
      metadata: { files_in_context: [], model_usage: [{ ts: T0, model_id: "gpt-4.1", model_provider_id: "openai", mode: "plan" }] },
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
    expect(item.workspaceRoot).toBe("");
    expect(item.workspaceNote).toMatch(/no reliable working directory/);
    expect(item.taskId).toBe("cline-2001");
    expect(item.startedAt).toBe(T0);
    expect(item.messageCount).toBe(11);

    const roots = resolveClineRoots({ HOME: home }, "linux");
    const candidate = listCandidates(roots).candidates.find((c) => c.sourceKey === "legacy:2001")!;
    const parsed = describeCandidate(candidate, roots).parsed!;
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
    writeLegacyTask(root, "3005", { rawConversation: good.slice(0, good.length / 2) });
    writeLegacyTask(root, "3006", { metadata: "{broken" });
    writeLegacyTask(root, "3007", {});
    const items = discover({ HOME: home });
    for (const key of ["legacy:3001", "legacy:3002", "legacy:3003", "legacy:3004", "legacy:3005"]) {
      const item = byKey(items, key);
      expect(item.skip?.code, key).toBe("malformed");
    }
    expect(byKey(items, "legacy:3001").skip?.reason).toMatch(/ui_messages\.json is not valid JSON/);
    expect(byKey(items, "legacy:3002").skip?.reason).toMatch(/entry 1 has no numeric ts/);
    expect(byKey(items, "legacy:3003").skip?.reason).toMatch(/does not hold a JSON array/);
    expect(byKey(items, "legacy:3004").skip?.reason).toMatch(/api_conversation_history\.json message 1 has no user\/assistant role/);
    // A broken task_metadata.json is not required: the task still imports, with a note.
    expect(byKey(items, "legacy:3006").skip).toBeUndefined();
    expect(byKey(items, "legacy:3007").skip).toBeUndefined();
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
    writeSession(sessions, "1717000000001_ccccc", { manifest: sessionManifest("1717000000001_ccccc", "/x", { metadata: { importedFrom: "claude-code" } }) });
    writeSession(sessions, "1717000000002_ddddd", {
      manifest: sessionManifest("1717000000002_ddddd", "/x", { metadata: { historyOrigin: { mode: "import", source: "codex" } } }),
    });
    writeSession(sessions, "1717000000003_eeeee", { cwd: chat });
    writeSession(sessions, "1717000000004_fffff", { manifest: null });
    writeSession(sessions, "1717000000005_ggggg", { manifest: "{not json" });
    writeSession(sessions, "1717000000006_hhhhh", { rawMessages: '{"version": 1, "messages": [' });
    writeSession(sessions, "1717000000007_iiiii", { rawMessages: JSON.stringify({ version: 1, messages: [{ role: "user", content: 42 }] }) });
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
    expect(discover({ HOME: home, CLINE_SESSION_DATA_DIR: ` ${custom} ` }).map((i) => i.sourceKey)).toEqual(["session:1717000000000_zzzzz"]);
    expect(discover({ HOME: home, CLINE_SESSION_DATA_DIR: "" })).toEqual([]);
  });

  it("reads nothing but never changes the Cline tree", () => {
    const home = tempHome();
    writeLegacyTask(vscodeGlobalStorage(home, "Code"), "4001", {});
    writeSession(path.join(clineHomeData(home), "sessions"), "1717000000000_qqqqq", { messages: sessionMessages(), subagents: ["a1"] });
    const before = snapshotTree(home);
    discover({ HOME: home });
    expect(snapshotTree(home)).toEqual(before);
  });
});
