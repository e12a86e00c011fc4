/**
 * Plays the conformance scenario through one client (a Driver) in fresh, isolated roots and
 * snapshots what it left: after the edit, and again after the deletion. Shared by every
 * client's conformance test.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { makeTestRoots } from "../helpers/sidecar.js";
import { spawnModelServer } from "../model-server/spawn.js";
import type { Driver, DriverResult } from "./drivers/driver.js";
import { scenario } from "./scenario.js";
import { takeSnapshot, type Snapshot } from "./snapshot.js";

export interface Run {
  result: DriverResult;
  afterEdit: Snapshot;
  afterDelete: Snapshot;
}

export async function play(driver: Driver): Promise<Run> {
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
