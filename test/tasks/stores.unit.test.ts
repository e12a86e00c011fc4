import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { DlineError } from "../../core/src/errors.js";
import { CommandLogs } from "../../core/src/tasks/command-logs.js";
import { JournalStore } from "../../core/src/tasks/journal-store.js";
import {
  MAX_BUFFERED_MESSAGES,
  MESSAGE_FLUSH_INTERVAL_MS,
  MessageStore,
  uiMessage,
} from "../../core/src/tasks/message-store.js";
import { StateFile } from "../../core/src/tasks/state-file.js";
import { TaskFileDamaged } from "../../core/src/tasks/task-db.js";
import { TaskFiles } from "../../core/src/tasks/task-files.js";
import { taskEnv } from "./helpers.js";
import { nth } from "../helpers/items.js";

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return (e as DlineError).code;
  }
  return undefined;
}

describe("per-task stores", () => {
  it("messages.db appends, updates, reads in order and truncates after a message", () => {
    const env = taskEnv();
    fs.mkdirSync(env.layout.task("task-1").dir, { recursive: true }); // its creator makes it
    const files = new TaskFiles(env.layout.task("task-1"), env.sqlite, env.logger);
    try {
      for (let i = 0; i < 5; i++)
        files.messages.append(uiMessage({ id: `m${i}`, text: `hello ${i}`, role: i === 0 ? "user" : "assistant" }));
      files.messages.update(
        uiMessage({
          id: "m2",
          text: "grown",
          partial: true,
          tool: "read_file",
          detail: "{}",
          checkpointId: "c1",
          askId: "a1",
        }),
      );
      const list = files.messages.list();
      expect(list.map((m) => m.id)).toEqual(["m0", "m1", "m2", "m3", "m4"]);
      expect(nth(list, 0, "message").role).toBe("user");
      expect(list[2]).toMatchObject({
        text: "grown",
        partial: true,
        tool: "read_file",
        checkpointId: "c1",
        askId: "a1",
      });
      expect(files.messages.truncateAfter("m2")).toBe(2);
      expect(files.messages.list().map((m) => m.id)).toEqual(["m0", "m1", "m2"]);
      expect(codeOf(() => files.messages.truncateAfter("nope"))).toBe("not_found");
      expect(() => files.messages.append(uiMessage({ id: "m0" }), { durable: true })).toThrow(/UNIQUE/); // ids are unique
    } finally {
      files.close();
    }
  });

  it("buffered appends are committed within the flush interval without an explicit flush", async () => {
    const env = taskEnv();
    fs.mkdirSync(env.layout.task("task-1").dir, { recursive: true }); // its creator makes it
    const file = env.layout.task("task-1").messagesDb;
    const writer = MessageStore.open(env.sqlite, file);
    const reader = MessageStore.open(env.sqlite, file); // another connection sees only committed rows
    const committed: string[] = [];
    writer.onCommitted((ids) => committed.push(...ids));
    try {
      writer.append(uiMessage({ id: "b1" }));
      writer.append(uiMessage({ id: "b2" }));
      expect(reader.count()).toBe(0);
      // A timer due after the flush interval runs after the store's own flush timer.
      await new Promise((r) => setTimeout(r, MESSAGE_FLUSH_INTERVAL_MS + 1));
      expect(reader.count()).toBe(2);
      expect(committed).toEqual(["b1", "b2"]);
      for (let i = 0; i < MAX_BUFFERED_MESSAGES; i++) writer.append(uiMessage({ id: `x${i}` }));
      expect(reader.count()).toBe(2 + MAX_BUFFERED_MESSAGES); // a full buffer commits at once
      writer.append(uiMessage({ id: "durable" }), { durable: true });
      expect(reader.has("durable")).toBe(true);
      // A bad row in a batch fails alone, reported by the next flush.
      writer.append(uiMessage({ id: "ok-1" }));
      writer.append(uiMessage({ id: "b1" }));
      writer.append(uiMessage({ id: "ok-2" }));
      await new Promise((r) => setTimeout(r, MESSAGE_FLUSH_INTERVAL_MS + 1));
      expect(() => writer.flush()).toThrow(/UNIQUE/);
      expect(reader.countIds(["ok-1", "ok-2"])).toBe(2);
    } finally {
      writer.close();
      reader.close();
    }
  });

  it("journal.db keeps entries, publications and payloads in order and truncates after an entry", () => {
    const env = taskEnv();
    fs.mkdirSync(env.layout.task("task-1").dir, { recursive: true }); // its creator makes it
    const journal = JournalStore.open(env.sqlite, env.layout.task("task-1").journalDb);
    try {
      const a = journal.append({ kind: "user_message", data: '{"text":"hi"}' });
      const b = journal.append({
        kind: "model_turn",
        data: "{}",
        payload: "big response body",
        publications: [{ command: "tool.run", data: '{"tool":"read_file"}' }],
      });
      const c = journal.append({ kind: "tool_result", data: "{}", payload: "big response body" });
      expect([a, b, c]).toEqual([1, 2, 3]);
      const entries = journal.entries();
      expect(entries.map((e) => e.kind)).toEqual(["user_message", "model_turn", "tool_result"]);
      expect(nth(entries, 1, "journal entry").payloadId).toBe(nth(entries, 2, "journal entry").payloadId);
      expect(journal.payload(nth(entries, 1, "journal entry").payloadId)?.toString()).toBe("big response body");
      expect(journal.publications(b)).toEqual([expect.objectContaining({ command: "tool.run", entrySeq: b })]);
      expect(journal.entries(1).map((e) => e.seq)).toEqual([2, 3]);
      expect(journal.truncateAfter(1)).toBe(2);
      expect(journal.entries().map((e) => e.seq)).toEqual([1]);
      expect(journal.publications()).toEqual([]);
      expect(journal.payload(nth(entries, 1, "journal entry").payloadId)).toBeUndefined();
    } finally {
      journal.close();
    }
  });

  it("a file that is not SQLite is reported as damage and left untouched", () => {
    const env = taskEnv();
    const file = env.layout.task("task-1").messagesDb;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, "this is not a database, it is a note");
    expect(() => MessageStore.open(env.sqlite, file)).toThrow(TaskFileDamaged);
    expect(fs.readFileSync(file, "utf8")).toBe("this is not a database, it is a note");
  });

  it("state.json keeps the previous version as .bak and falls back to it when torn", () => {
    const env = taskEnv();
    const t = env.layout.task("task-1");
    const state = new StateFile(t.stateJson, t.stateJsonBak);
    expect(state.read()).toEqual({ value: undefined, source: "none" });
    state.write({ turn: 1 });
    state.write({ turn: 2 });
    expect(JSON.parse(fs.readFileSync(t.stateJsonBak, "utf8"))).toEqual({ turn: 1 });
    expect(state.read()).toEqual({ value: { turn: 2 }, source: "state" });
    fs.writeFileSync(t.stateJson, '{"turn": 3, "inp'); // torn write
    const read = state.read();
    expect(read.value).toEqual({ turn: 1 });
    expect(read.source).toBe("backup");
    expect(fs.readFileSync(read.keptAside!, "utf8")).toBe('{"turn": 3, "inp'); // kept aside, not erased
    // state.json gone between the two renames of a write: the backup is used.
    fs.rmSync(t.stateJson, { force: true });
    expect(state.read()).toEqual({ value: { turn: 1 }, source: "backup" });
    // Both unusable: damage, nothing erased.
    fs.writeFileSync(t.stateJson, "[");
    fs.writeFileSync(t.stateJsonBak, "{");
    expect(() => state.read()).toThrow(TaskFileDamaged);
    expect(fs.readFileSync(t.stateJsonBak, "utf8")).toBe("{");
  });

  it("artifacts accept task-relative paths only", () => {
    const env = taskEnv();
    const files = new TaskFiles(env.layout.task("task-1"), env.sqlite, env.logger);
    const written = files.artifacts.write("images/shot.png", "png-bytes");
    expect(written).toBe(path.join(env.layout.task("task-1").artifactsDir, "images", "shot.png"));
    expect(files.artifacts.read("images/shot.png").toString()).toBe("png-bytes");
    expect(codeOf(() => files.artifacts.write("../escape.txt", "x"))).toBe("invalid_argument");
    expect(codeOf(() => files.artifacts.write("a/../../escape.txt", "x"))).toBe("invalid_argument");
    expect(codeOf(() => files.artifacts.write("/etc/passwd", "x"))).toBe("invalid_argument");
    expect(codeOf(() => files.artifacts.write("C:\\Windows\\x", "x"))).toBe("invalid_argument");
    const outside = fs.mkdtempSync(path.join(env.roots.base, "outside-"));
    fs.symlinkSync(outside, path.join(files.layout.artifactsDir, "link"));
    expect(codeOf(() => files.artifacts.write("link/evil.txt", "x"))).toBe("invalid_argument");
    expect(fs.readdirSync(outside)).toEqual([]);
    fs.symlinkSync(path.join(outside, "target.txt"), path.join(files.layout.artifactsDir, "dangling"));
    expect(codeOf(() => files.artifacts.write("dangling", "x"))).toBe("invalid_argument");
    expect(fs.existsSync(path.join(outside, "target.txt"))).toBe(false);
    files.close();
  });

  it("command logs drop the oldest logs first to fit the budget, never by age alone", () => {
    const env = taskEnv();
    const logs = new CommandLogs(env.layout.task("task-1").commandLogsDir, 3000);
    const a = logs.logPath("cmd-a", 1000);
    const b = logs.logPath("cmd-b", 2000);
    const c = logs.logPath("cmd-c", 3000);
    logs.append(a, "x".repeat(1000));
    logs.append(b, "x".repeat(1000));
    expect(logs.enforceBudget()).toEqual([]); // old but within budget: kept
    logs.append(c, "x".repeat(1500));
    expect(logs.enforceBudget(c)).toEqual([path.basename(a)]);
    expect(logs.totalBytes()).toBe(2500);
    logs.append(c, "x".repeat(2000)); // the log being written is never the one dropped
    expect(logs.enforceBudget(c)).toEqual([path.basename(b)]);
    expect(fs.existsSync(c)).toBe(true);
  });

  it("a store of a task whose folder is gone is not found, and the folder is not made again", () => {
    const env = taskEnv();
    const task = env.layout.task("deleted-1");
    for (const open of [
      () => MessageStore.open(env.sqlite, task.messagesDb),
      () => JournalStore.open(env.sqlite, task.journalDb),
    ])
      expect(codeOf(open)).toBe("not_found");
    expect(fs.existsSync(task.dir)).toBe(false);
  });

  it("subagents have the same layout nested to any depth", () => {
    const env = taskEnv();
    const files = new TaskFiles(env.layout.task("task-1"), env.sqlite, env.logger);
    const child = files.subagent("sub-1");
    const grandchild = child.subagent("sub-2");
    fs.mkdirSync(grandchild.layout.dir, { recursive: true }); // as a subagent's loop makes it
    grandchild.messages.append(uiMessage({ id: "g1", text: "deep" }));
    grandchild.state.write({ depth: 2 });
    expect(grandchild.layout.messagesDb).toBe(
      path.join(env.layout.task("task-1").dir, "subagents", "sub-1", "subagents", "sub-2", "messages.db"),
    );
    expect(nth(grandchild.messages.list(), 0, "message").text).toBe("deep");
    expect(grandchild.state.read().value).toEqual({ depth: 2 });
    expect(() => files.subagent("../x")).toThrow(DlineError);
    files.close();
  });

  it("context files: atomic JSON, and a torn last line of context_history.jsonl is skipped", () => {
    const env = taskEnv();
    const files = new TaskFiles(env.layout.task("task-1"), env.sqlite, env.logger);
    files.json.writeContext({ files: ["a.ts"] });
    expect(files.json.readContext()).toEqual({ files: ["a.ts"] });
    files.json.appendContextHistory({ n: 1 });
    files.json.appendContextHistory({ n: 2 });
    fs.appendFileSync(files.layout.contextHistoryJsonl, '{"n": 3, "tr');
    expect(files.json.readContextHistory()).toEqual([{ n: 1 }, { n: 2 }]);
    fs.writeFileSync(files.layout.metadataJson, "[1,2");
    expect(() => files.json.readMetadata()).toThrow(TaskFileDamaged);
  });
});
