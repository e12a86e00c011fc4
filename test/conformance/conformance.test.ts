/**
 * Cross-client conformance: the scenario of scenario.ts played through the CLI (+ TS client)
 * and through the Neovim plugin must leave the same workspace files, the same rows in
 * taskHistory.db / messages.db / journal.db (ids and times aside) and the same checkpoint
 * trees, after the edit and again after the deletion.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTestRoots } from "../helpers/sidecar.js";
import { spawnModelServer } from "../model-server/spawn.js";
import { cliDriver } from "./drivers/cli-driver.js";
import type { Driver, DriverResult } from "./drivers/driver.js";
import { neovimDriver } from "./drivers/neovim-driver.js";
import { scenario } from "./scenario.js";
import { takeSnapshot, type Snapshot } from "./snapshot.js";

interface Run {
  result: DriverResult;
  afterEdit: Snapshot;
  afterDelete: Snapshot;
}

async function play(driver: Driver): Promise<Run> {
  const roots = makeTestRoots(`dline-conformance-${driver.name}-`);
  const workspace = path.join(roots.base, "project");
  for (const [name, content] of Object.entries(scenario.files)) {
    fs.mkdirSync(path.dirname(path.join(workspace, name)), { recursive: true });
    fs.writeFileSync(path.join(workspace, name), content);
  }
  execFileSync("git", ["init", "-q"], { cwd: workspace });
  const server = await spawnModelServer(scenario.script);
  try {
    const ctx = { roots, workspace, modelUrl: server.url };
    const snapshotRoots = {
      workspace,
      dataRoot: path.join(roots.dlineDir, "data"),
      documentsRoot: roots.docsDir,
      replace: { [roots.base]: "<base>", [server.url]: "<model-url>" },
    };
    const result = await driver.play(ctx);
    const afterEdit = takeSnapshot(snapshotRoots);
    await driver.deleteTask(ctx, result.taskId);
    const afterDelete = takeSnapshot(snapshotRoots);
    return { result, afterEdit, afterDelete };
  } finally {
    await server.stop();
  }
}

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
    expect(cli.afterEdit.tasks[0].messages.messages.length).toBeGreaterThan(3);
    expect(cli.afterEdit.tasks[0].journal.entries.length).toBeGreaterThan(0);
    expect(cli.afterEdit.checkpointTrees.length).toBeGreaterThan(0);
    expect(cli.afterDelete.tasks).toHaveLength(0);

    expect(nvim.result.compare).toEqual(cli.result.compare);
    expect(nvim.afterEdit).toEqual(cli.afterEdit);
    expect(nvim.afterDelete).toEqual(cli.afterDelete);
  });
});
