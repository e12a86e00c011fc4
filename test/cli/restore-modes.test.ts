import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import type { ModelServerProcess } from "../model-server/spawn.js";
import type { ScriptTurn } from "../model-server/script.js";
import { repoRoot } from "../helpers/sidecar.js";
import { captured } from "../helpers/items.js";
import { cliSandbox } from "../helpers/cli-tasks.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");
const servers: ModelServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

/** The person's files, each with its permission bits: a private key, a script, a plain file. */
const FILES = {
  "keys/deploy.key": ["-----BEGIN PRIVATE KEY-----\nsecret\n", 0o600],
  "scripts/deploy.sh": ["#!/bin/sh\necho deploy\n", 0o755],
  "notes.txt": ["plain notes\n", 0o644],
} as const;

function modeOf(workspace: string, rel: string): string {
  return (fs.statSync(path.join(workspace, rel)).mode & 0o777).toString(8);
}

/** A sandbox whose workspace holds FILES with their modes (made regardless of the umask). */
async function sandboxWithFiles(turns: ScriptTurn[]) {
  const sandbox = await cliSandbox(turns, servers);
  for (const [rel, [content, mode]] of Object.entries(FILES)) {
    const abs = path.join(sandbox.workspace, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
    fs.chmodSync(abs, mode);
  }
  return sandbox;
}

const command = (line: string): ScriptTurn => ({
  toolCalls: [{ name: "execute_command", input: { command: line, requires_approval: false } }],
});
const DONE: ScriptTurn = { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] };

async function runTask(env: NodeJS.ProcessEnv, workspace: string): Promise<string> {
  const task = await run(cli, ["task", "do it", "--workspace", workspace, "--yes"], { env });
  return captured(/task (\S+)/.exec(task.stderr), "the task id on stderr");
}

async function baselineOf(env: NodeJS.ProcessEnv, taskId: string): Promise<string> {
  const { checkpoints } = JSON.parse((await run(cli, ["--json", "checkpoints", taskId], { env })).stdout) as {
    checkpoints: { id: string; kind: string }[];
  };
  return checkpoints.find((c) => c.kind === "CHECKPOINT_KIND_BASELINE")!.id;
}

async function restore(env: NodeJS.ProcessEnv, taskId: string, id: string, mode: string) {
  return JSON.parse((await run(cli, ["--json", "restore", taskId, id, "--mode", mode], { env })).stdout) as {
    restoredPaths: string[];
    undoCheckpointId: string;
  };
}

function expectAllBack(workspace: string): void {
  for (const [rel, [content, mode]] of Object.entries(FILES)) {
    expect(fs.readFileSync(path.join(workspace, rel), "utf8"), rel).toBe(content);
    expect(`${rel} ${modeOf(workspace, rel)}`).toBe(`${rel} ${mode.toString(8)}`);
  }
}

describe("a restore that makes a file again gives it the permissions it had at the checkpoint", () => {
  it("a command deleted a 0600 key, a 0755 script and a 0644 file: a files restore to the baseline (reset-like) and a files-and-task restore bring them back 600, 755, 644", async () => {
    const { env, workspace } = await sandboxWithFiles([
      command("rm keys/deploy.key scripts/deploy.sh notes.txt"),
      DONE,
    ]);
    const taskId = await runTask(env, workspace);
    expect(fs.existsSync(path.join(workspace, "keys/deploy.key"))).toBe(false);
    const baseline = await baselineOf(env, taskId);

    const restored = await restore(env, taskId, baseline, "files");
    expect([...restored.restoredPaths].sort()).toEqual(Object.keys(FILES).sort());
    expectAllBack(workspace);

    // Undone (the files deleted again), then the workspace restored with the task.
    await restore(env, taskId, restored.undoCheckpointId, "files");
    expect(fs.existsSync(path.join(workspace, "keys/deploy.key"))).toBe(false);
    await restore(env, taskId, baseline, "files-and-task");
    expectAllBack(workspace);
  });

  it("a tool edited the key and the notes, then a command deleted them and the script: the recorded-path restore makes each again with its mode", async () => {
    const { env, workspace } = await sandboxWithFiles([
      {
        toolCalls: [
          {
            name: "replace_in_file",
            input: {
              path: "keys/deploy.key",
              diff: "------- SEARCH\nsecret\n=======\nrotated by the task\n+++++++ REPLACE",
            },
          },
          { name: "write_to_file", input: { path: "notes.txt", content: "notes by the task\n" } },
        ],
      },
      command("rm keys/deploy.key scripts/deploy.sh notes.txt"),
      DONE,
    ]);
    const taskId = await runTask(env, workspace);
    expect(fs.existsSync(path.join(workspace, "keys/deploy.key"))).toBe(false);

    const restored = await restore(env, taskId, await baselineOf(env, taskId), "files");
    expect([...restored.restoredPaths].sort()).toEqual(Object.keys(FILES).sort());
    expectAllBack(workspace);
  });

  it("a later task (another process, after a restore of tool edits moved the newest snapshot) deletes the key and the script: its restore still knows 600 and 755", async () => {
    const { env, workspace } = await sandboxWithFiles([
      { toolCalls: [{ name: "write_to_file", input: { path: "notes.txt", content: "notes by the task\n" } }] },
      DONE,
      command("rm keys/deploy.key scripts/deploy.sh"),
      DONE,
    ]);
    const first = await runTask(env, workspace);
    await restore(env, first, await baselineOf(env, first), "files");
    expect(fs.readFileSync(path.join(workspace, "notes.txt"), "utf8")).toBe(FILES["notes.txt"][0]);
    const taskId = await runTask(env, workspace);
    expect(fs.existsSync(path.join(workspace, "keys/deploy.key"))).toBe(false);

    await restore(env, taskId, await baselineOf(env, taskId), "files");
    expectAllBack(workspace);
  });
});
