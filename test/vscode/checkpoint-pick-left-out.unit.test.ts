/**
 * From an audit in code-server:
 * - the restore confirmation named only the files it restores ("Other files stay as they are."):
 *   changed files the checkpoints do not track (.env, build/other.js changed by a command) were
 *   named only after the restore, in a warning. It now names them beforehand, from Compare's
 *   answer (its files not among its restore_paths), a few then "and N more";
 * - the "Restore which checkpoint?" quick pick showed a 12-character id and a kind per row
 *   ("turn" five times). Each row now says when, what and how many files, the id beside;
 * - Compare showed a change the checkpoints leave out as an empty side against the file (read
 *   as a file emptied or created). It is now named "not tracked by checkpoints: not compared
 *   or restored", and a Compare of only such changes says so instead of "no changes".
 */
import { describe, expect, it } from "vitest";
import type { ChatCheckpoint, ChatMessageItem } from "../../adapters/vscode/src/chat/chat-state.js";
import { checkpointPickItems, checkpointTime } from "../../adapters/vscode/src/checkpoints/checkpoint-pick.js";
import {
  notTrackedName,
  notTrackedSides,
  onlyNotTrackedNotice,
} from "../../adapters/vscode/src/checkpoints/not-tracked.js";
import {
  leftAloneByRestore,
  leftAloneSentence,
  restoreConfirmation,
} from "../../adapters/vscode/src/checkpoints/restore-options.js";

const change = (path: string, over: { notTracked?: boolean; tooLarge?: boolean } = {}) => ({
  path,
  notTracked: false,
  tooLarge: false,
  ...over,
});

describe("the restore confirmation names beforehand the changed files it leaves as they are", () => {
  const files = [
    change(".env", { notTracked: true }),
    change("README.md"),
    change("build/", { notTracked: true }),
    change("build/config.js"),
    change("mine.txt"),
  ];
  const restorePaths = ["README.md", "build/config.js"];

  it("takes them from Compare: its files not among its restore paths, with why", () => {
    expect(leftAloneByRestore(files, restorePaths)).toEqual([
      { path: ".env", reason: "not tracked" },
      { path: "build/", reason: "not tracked" },
      { path: "mine.txt", reason: "not changed by this task" },
    ]);
    expect(leftAloneByRestore([change("big.bin", { tooLarge: true })], [])).toEqual([
      { path: "big.bin", reason: "too large" },
    ]);
  });

  it("says them in the question, instead of only 'Other files stay as they are.'", () => {
    const text = restoreConfirmation(restorePaths, 5, [], leftAloneByRestore(files, restorePaths));
    expect(text).toContain("2 files changed since this checkpoint (README.md, build/config.js) will be put back");
    expect(text).toContain(
      "3 changed files will stay as they are, not restored: .env, build/ (not tracked by checkpoints); mine.txt (not changed by this task).",
    );
    expect(text).not.toContain("Other files stay as they are");
    expect(text).toMatch(/Undo on the notice afterwards puts them back as they are now\.$/);
  });

  it("keeps it short: a few names, then how many more (control characters shown)", () => {
    const many = Array.from({ length: 9 }, (_, i) => ({ path: `build/f${i}.js`, reason: "not tracked" as const }));
    const sentence = leftAloneSentence([{ path: "x\u001b[2J", reason: "not tracked" }, ...many], 3);
    expect(sentence).toBe(
      "10 changed files will stay as they are, not restored: x\\e[2J, build/f0.js, build/f1.js (not tracked by checkpoints) and 7 more.",
    );
  });

  it("says so when the restore would put back nothing but something changed", () => {
    const text = restoreConfirmation([], 5, [], [{ path: ".env", reason: "not tracked" }]);
    expect(text).toBe(
      "No file this restore can put back changed since this checkpoint: nothing will be overwritten. 1 changed file will stay as it is, not restored: .env (not tracked by checkpoints).",
    );
    expect(restoreConfirmation([])).toBe("No file changed since this checkpoint: nothing will be overwritten.");
  });

  it("says first that a running task is stopped before the restore", () => {
    expect(restoreConfirmation(["ticks.txt"], 5, [], [], true)).toMatch(
      /^The task is running: it is stopped first; Resume goes on afterwards\. 1 file changed since this checkpoint \(ticks\.txt\)/,
    );
    // A command of it runs: stopped too, and what it changes until then is undone too.
    expect(restoreConfirmation(["ticks.txt"], 5, [], [], "command")).toMatch(
      /^The task is running: it is stopped first, with its command, and what the command changes until then is undone too\. Resume goes on afterwards\. 1 file changed since this checkpoint \(ticks\.txt\)/,
    );
    expect(restoreConfirmation(["ticks.txt"], 5, [], [])).toMatch(/^1 file changed since this checkpoint/);
  });

  it("keeps its old words when nothing is left alone", () => {
    expect(restoreConfirmation(["a.txt"], 5, [], [])).toContain("Other files stay as they are.");
  });
});

const msg = (over: Partial<ChatMessageItem>): ChatMessageItem => ({
  type: "message",
  id: "m",
  time: 0,
  role: "assistant",
  kind: "text",
  text: "",
  partial: false,
  tool: "",
  detail: "",
  checkpointId: "",
  ...over,
});
const tool = (id: string, name: string, input: Record<string, unknown>) =>
  msg({
    id,
    role: "tool",
    kind: name === "execute_command" ? "command" : "tool",
    tool: name,
    detail: JSON.stringify(input),
  });
const cp = (id: string, kind: string, createdAt: number, over: Partial<ChatCheckpoint> = {}): ChatCheckpoint => ({
  id,
  kind: `CHECKPOINT_KIND_${kind}`,
  messageId: "",
  hasFiles: true,
  restored: false,
  createdAt,
  editedPaths: [],
  ...over,
});

describe("the 'which checkpoint?' quick pick", () => {
  const start = new Date(2026, 11, 4, 14, 19, 32).getTime();
  const items = [
    msg({ id: "u1", role: "user", kind: "text", text: "Tidy up the project" }),
    tool("t1", "replace_in_file", { path: "README.md" }),
    tool("t2", "write_to_file", { path: "crlf.txt" }),
    tool("t3", "execute_command", { command: "npm run setup" }),
    msg({ id: "c1", kind: "completion", text: "Tidied." }),
  ];
  const checkpoints = [
    cp("d68c80271da1aaaa", "BASELINE", start, { messageId: "u1" }),
    cp("5e0c91a7041dbbbb", "TURN", start + 5_000, { messageId: "t1", editedPaths: ["README.md"] }),
    cp("636b1bab19bacccc", "TURN", start + 9_000, { messageId: "t2", editedPaths: ["crlf.txt"] }),
    cp("3e61fa9e61e8dddd", "TURN", start + 15_000, { messageId: "t3" }),
    cp("0f69a103c578eeee", "COMPLETION", start + 20_000, { messageId: "c1" }),
    cp("99aa00bb11cc2222", "BEFORE_RESTORE", start + 60_000, {
      messageId: "u1",
      editedPaths: ["README.md", "crlf.txt", "a", "b"],
      undoAvailable: true,
    }),
  ];
  const clock = (ms: number) => checkpointTime(ms, start);

  it("says when, what and how many files, newest first, with the id in the description", () => {
    const rows = checkpointPickItems(checkpoints, items, start);
    expect(rows.map((r) => [r.label, r.description, r.id])).toEqual([
      [
        `${clock(start + 60_000)} · Before the restore (its Undo)`,
        "4 files the restore changed · 99aa00bb11cc",
        "99aa00bb11cc2222",
      ],
      [`${clock(start + 20_000)} · Completion of the task`, "0f69a103c578", "0f69a103c578eeee"],
      [`${clock(start + 15_000)} · After turn 3: Run command npm run setup`, "3e61fa9e61e8", "3e61fa9e61e8dddd"],
      [`${clock(start + 9_000)} · After turn 2: Write crlf.txt`, "1 file edited · 636b1bab19ba", "636b1bab19bacccc"],
      [`${clock(start + 5_000)} · After turn 1: Edit README.md`, "1 file edited · 5e0c91a7041d", "5e0c91a7041dbbbb"],
      [`${clock(start)} · Start of the task`, "d68c80271da1", "d68c80271da1aaaa"],
    ]);
    expect(rows[0]?.detail).toBe("README.md, crlf.txt, a and 1 more");
    // No two rows read alike (they did: "turn" five times).
    expect(new Set(rows.map((r) => r.label)).size).toBe(rows.length);
  });

  it("tells the time as the chat markers do, with the date when not today", () => {
    expect(clock(start)).toBe(
      new Date(start).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" }),
    );
    expect(checkpointTime(start, start + 3 * 86_400_000)).toContain(String(new Date(start).getFullYear()));
  });

  it("still says which turn without the task's messages, and flags a restored one", () => {
    const rows = checkpointPickItems(
      [cp("a1", "BASELINE", 0, { restored: true }), cp("b2", "TURN", 0), cp("c3", "TURN", 0)],
      [],
    );
    expect(rows.map((r) => [r.label, r.description])).toEqual([
      ["After turn 2", "c3"],
      ["After turn 1", "b2"],
      ["Start of the task", "files restored to it · a1"],
    ]);
  });
});

describe("a change the checkpoints do not track, in Compare", () => {
  it("is named as such, a folder too", () => {
    expect(notTrackedName(".env")).toBe(".env (not tracked by checkpoints: not compared or restored)");
    expect(notTrackedName("build/")).toBe("build/ (not tracked by checkpoints: not compared or restored)");
  });

  it("has two sides that say why, not an empty side that reads as the file emptied", () => {
    const sides = notTrackedSides(".env", "modified");
    expect(sides.before).toContain("not tracked by checkpoints");
    expect(sides.after).toContain("This file changed since the checkpoint.");
    expect(sides.before).not.toBe("");
    expect(notTrackedSides("build/", "modified").after).toContain("Files in this folder changed");
    expect(notTrackedSides("gone.txt", "deleted").after).toContain("deleted since the checkpoint");
  });

  it("is never said as 'no changes'", () => {
    const notice = onlyNotTrackedNotice("Changes since snapshot", [".env", "build/"]);
    expect(notice).toBe(
      "Changes since snapshot: no tracked file changed; 2 changes not tracked by checkpoints (not compared or restored): .env, build/.",
    );
    expect(notice).not.toContain("no changes");
  });
});
