/**
 * Cross-client conformance: the scenario of scenario.ts played through the CLI (+ TS client)
 * and through the Neovim plugin must leave the same workspace files, the same rows in
 * taskHistory.db / messages.db / journal.db (ids and times aside) and the same checkpoint
 * trees, after the edit and again after the deletion.
 */
import { describe, expect, it } from "vitest";
import { cliDriver } from "./drivers/cli-driver.js";
import { neovimDriver } from "./drivers/neovim-driver.js";
import { play } from "./play.js";
import { nth, entry } from "../helpers/items.js";

describe("conformance: the same scenario through every client leaves the same state", () => {
  it("CLI and Neovim agree on files, databases and checkpoint trees", { timeout: 300_000 }, async () => {
    const cli = await play(cliDriver);
    const nvim = await play(neovimDriver);

    // The scenario did what it says (so that equal snapshots are not equally empty).
    expect(cli.result.compare).toEqual([
      { path: "hello.txt", status: "modified" },
      { path: "notes.md", status: "added" },
    ]);
    // Restore Files Only went back to the baseline; Restore All then brought back the files of
    // the edited message's checkpoint (after the task's edits).
    expect(cli.afterEdit.files["hello.txt"]).toBe("hello, world\n");
    expect(cli.afterEdit.files["notes.md"]).toBe("# Notes\ncreated by dline\n");
    expect(cli.afterEdit.tasks).toHaveLength(1);
    expect(cli.afterEdit.taskHistory.tasks).toHaveLength(1);
    const task = nth(cli.afterEdit.tasks, 0, "task");
    expect(entry(task.messages, "messages", "table of messages.db").length).toBeGreaterThan(3);
    expect(entry(task.journal, "entries", "table of journal.db").length).toBeGreaterThan(0);
    expect(cli.afterEdit.checkpointTrees.length).toBeGreaterThan(0);
    expect(cli.afterDelete.tasks).toHaveLength(0);

    expect(nvim.result.compare).toEqual(cli.result.compare);
    expect(nvim.afterEdit).toEqual(cli.afterEdit);
    expect(nvim.afterDelete).toEqual(cli.afterDelete);
  });
});
