/**
 * Conformance of the VS Code extension: the scenario of test/conformance played through the
 * extension in a real VS Code leaves the same workspace files, database rows and checkpoint
 * trees as the CLI (the reference client), after the edit and after the deletion.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTestRoots } from "../helpers/sidecar.js";
import { spawnModelServer } from "../model-server/spawn.js";
import { cliDriver } from "../conformance/drivers/cli-driver.js";
import type { Driver, DriverResult } from "../conformance/drivers/driver.js";
import { scenario } from "../conformance/scenario.js";
import { takeSnapshot, type Snapshot } from "../conformance/snapshot.js";
import { vscodeDriver } from "./conformance-driver.js";

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

describe("conformance: the VS Code extension leaves the same state as the CLI", () => {
  it("VS Code and the CLI agree on files, databases and checkpoint trees", { timeout: 600_000 }, async () => {
    const cli = await play(cliDriver);
    const vscode = await play(vscodeDriver);
    // The scenario did something (equal snapshots are not equally empty).
    expect(cli.afterEdit.tasks).toHaveLength(1);
    expect(cli.afterDelete.tasks).toHaveLength(0);
    expect(vscode.result.compare).toEqual(cli.result.compare);
    expect(vscode.afterEdit).toEqual(cli.afterEdit);
    expect(vscode.afterDelete).toEqual(cli.afterDelete);
  });
});
