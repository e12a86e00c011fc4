import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeTestRoots, repoRoot, startSidecar } from "../helpers/sidecar.js";
import { CheckpointKind, EditMessageMode, RestoreMode } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { cliEnv, crashSidecar, startCli } from "../helpers/cli-child.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");
const servers: ModelServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A task that wrote README.md, then ran a command appending to src/app.js; its sidecar killed during the command. */
async function taskKilledDuringCommand() {
  const roots = makeTestRoots();
  const workspace = makeWorkspace(roots.base, { "src/app.js": "console.log('app');\n" });
  const server = await spawnModelServer({
    apiKey: TEST_KEY,
    turns: [
      { toolCalls: [{ name: "write_to_file", input: { path: "README.md", content: "# rewritten\n" } }] },
      {
        toolCalls: [
          {
            name: "execute_command",
            input: { command: "printf 'by the command\\n' >> src/app.js; sleep 30", requires_approval: false },
          },
        ],
      },
    ],
  });
  servers.push(server);
  const env = cliEnv(roots, server);
  const task = startCli(["--json", "task", "edit, then run it", "--workspace", workspace, "--yes"], env);
  const app = path.join(workspace, "src/app.js");
  await until(() => fs.readFileSync(app, "utf8").includes("by the command"), "the command's change");
  await crashSidecar(task);
  const taskId = (JSON.parse(task.stdout().trim().split("\n")[0]!) as { taskId: string }).taskId;
  return { roots, workspace, env, app, taskId };
}

describe("a restore after the sidecar died during a command", () => {
  it("Restore All's dry run names the command's change too, as the Restore All then restores it", async () => {
    const { roots, app, taskId } = await taskKilledDuringCommand();
    const sidecar = await startSidecar({ roots });
    try {
      const { clients } = sidecar;
      const first = (await clients.tasks.getTask({ taskId })).messages.find((m) => m.text === "edit, then run it")!;
      const edit = { taskId, messageId: first.id, text: "edit, then run it again", mode: EditMessageMode.RESTORE_ALL };
      const dry = await clients.checkpoints.editMessage({ ...edit, dryRun: true });
      expect(fs.readFileSync(app, "utf8")).toBe("console.log('app');\nby the command\n");
      const real = await clients.checkpoints.editMessage(edit);
      expect(real.fileError).toBe("");
      expect(real.restoredPaths).toContain("src/app.js");
      // Before: the dry run left src/app.js out (no checkpoint said a command ran).
      expect([...dry.restoredPaths].sort()).toEqual([...real.restoredPaths].sort());
      expect(fs.readFileSync(app, "utf8")).toBe("console.log('app');\n");
    } finally {
      await sidecar.stop();
    }
  });

  it("the turn checkpoint the restore saves for the command first is on the command's row, and told (found with the Kotlin client)", async () => {
    const { roots, taskId } = await taskKilledDuringCommand();
    const sidecar = await startSidecar({ roots });
    try {
      const { clients } = sidecar;
      const before = (await clients.checkpoints.listCheckpoints({ taskId })).checkpoints;
      const baseline = before.find((c) => c.kind === CheckpointKind.BASELINE)!;
      await clients.checkpoints.restore({ taskId, checkpointId: baseline.id, mode: RestoreMode.FILES });
      const after = (await clients.checkpoints.listCheckpoints({ taskId })).checkpoints;
      const saved = after.find((c) => !before.some((b) => b.id === c.id) && c.kind === CheckpointKind.TURN)!;
      expect(saved).toBeDefined();
      const row = (await clients.tasks.getTask({ taskId })).messages.find((m) => m.id === saved.messageId)!;
      expect(row.tool).toBe("execute_command");
      // Before: "" (the listing had it, the chat did not).
      expect(row.checkpointId).toBe(saved.id);
      const told: string[] = [];
      const stop = new AbortController();
      setTimeout(() => stop.abort(), 3000);
      try {
        for await (const res of clients.tasks.subscribe({ taskId, afterSeq: 0n }, { signal: stop.signal })) {
          const ev = res.event!.event;
          if (ev.case === "checkpointSaved") told.push(ev.value.checkpointId);
          if (ev.case === "filesRestored") break;
        }
      } catch {
        // the stream went quiet: what was told is in `told`
      }
      expect(told).toContain(saved.id);
    } finally {
      await sidecar.stop();
    }
  });

  it("the command's change is compared, restored and named like that of a command whose turn was saved", async () => {
    const { workspace, env, app, taskId } = await taskKilledDuringCommand();

    const { checkpoints } = JSON.parse((await run(cli, ["--json", "checkpoints", taskId], { env })).stdout) as {
      checkpoints: { id: string; kind: string }[];
    };
    const baseline = checkpoints.find((c) => c.kind === "CHECKPOINT_KIND_BASELINE")!.id;
    const compared = JSON.parse((await run(cli, ["--json", "compare", taskId, baseline], { env })).stdout) as {
      files: { path: string }[];
    };
    expect(compared.files.map((f) => f.path).sort()).toEqual(["README.md", "src/app.js"]);

    const restored = JSON.parse(
      (await run(cli, ["--json", "restore", taskId, baseline, "--mode", "files"], { env })).stdout,
    ) as { restoredPaths: string[]; undoCheckpointId: string };
    // Before: only README.md came back; src/app.js kept the command's line, and nothing said so.
    expect([...restored.restoredPaths].sort()).toEqual(["README.md", "src/app.js"]);
    expect(fs.readFileSync(path.join(workspace, "README.md"), "utf8")).toBe("# demo\n");
    expect(fs.readFileSync(app, "utf8")).toBe("console.log('app');\n");

    // The undo point holds what the command left: undoing the restore brings it back.
    await run(cli, ["--json", "restore", taskId, restored.undoCheckpointId, "--mode", "files"], { env });
    expect(fs.readFileSync(app, "utf8")).toBe("console.log('app');\nby the command\n");
    expect(fs.readFileSync(path.join(workspace, "README.md"), "utf8")).toBe("# rewritten\n");
  });
});
