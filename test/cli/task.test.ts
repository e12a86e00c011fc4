import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeTestRoots, repoRoot, sidecarBinary } from "../helpers/sidecar.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");
const servers: ModelServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function dline(env: NodeJS.ProcessEnv, args: string[]) {
  return run(cli, args, { env, maxBuffer: 16 * 1024 * 1024 });
}

describe("dline task (the CLI as a separate process)", () => {
  it("runs a task against a model from the environment, then lists, shows, compares and restores it", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        { text: "Reading.", toolCalls: [{ name: "read_file", input: { path: "src/app.txt" } }] },
        {
          toolCalls: [
            { name: "write_to_file", input: { path: "src/new.txt", content: "new\n" } },
            { name: "replace_in_file", input: { path: "src/app.txt", diff: "------- SEARCH\nhello\n=======\nbye\n+++++++ REPLACE" } },
          ],
        },
        { toolCalls: [{ name: "execute_command", input: { command: "echo from-command", requires_approval: true } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "All done." } }] },
      ],
    });
    servers.push(server);
    const env = {
      ...roots.env,
      DLINE_CORE: sidecarBinary,
      OPENAI_BASE_URL: server.url,
      OPENAI_MODEL: "scripted-model",
      OPENAI_API_KEY: TEST_KEY,
    };
    const { stdout, stderr } = await dline(env, ["--json", "task", "Change the greeting", "--workspace", workspace, "--yes"]);
    const events = stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(events.map((e) => Number(e.seq))).toEqual(events.map((_, i) => Number(events[0].seq) + i));
    expect(events.some((e) => e.toolOutput?.chunk.includes("from-command"))).toBe(true);
    expect(events[events.length - 1].statusChanged.status).toBe("TASK_STATUS_COMPLETED");
    expect(fs.readFileSync(path.join(workspace, "src/app.txt"), "utf8")).toBe("bye\n");
    expect(fs.readFileSync(path.join(workspace, "src/new.txt"), "utf8")).toBe("new\n");
    expect(stdout + stderr).not.toContain(TEST_KEY);
    const taskId = events[0].taskId as string;

    const history = JSON.parse((await dline(env, ["--json", "history"])).stdout);
    expect(history.tasks.map((t: { id: string }) => t.id)).toEqual([taskId]);
    expect(history.tasks[0].title).toBe("Change the greeting");

    const shown = JSON.parse((await dline(env, ["--json", "show", taskId])).stdout);
    expect(shown.messages[shown.messages.length - 1].kind).toBe("completion");

    const checkpoints = JSON.parse((await dline(env, ["--json", "checkpoints", taskId])).stdout).checkpoints;
    const baseline = checkpoints.find((c: { kind: string }) => c.kind === "CHECKPOINT_KIND_BASELINE");
    expect(baseline).toBeDefined();
    const compared = JSON.parse((await dline(env, ["--json", "compare", taskId, baseline.id])).stdout).files;
    expect(compared.map((f: { path: string }) => f.path).sort()).toEqual(["src/app.txt", "src/new.txt"]);

    await dline(env, ["restore", taskId, baseline.id, "--mode", "files"]);
    expect(fs.readFileSync(path.join(workspace, "src/app.txt"), "utf8")).toBe("hello\n");
    expect(fs.existsSync(path.join(workspace, "src/new.txt"))).toBe(false);

    await dline(env, ["delete", taskId]);
    expect(JSON.parse((await dline(env, ["--json", "history"])).stdout).tasks).toEqual([]);
  });

  it("denies asks when not interactive and without --yes", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    const server = await spawnModelServer({
      turns: [
        { toolCalls: [{ name: "write_to_file", input: { path: "x.txt", content: "x" } }] },
      ],
    });
    servers.push(server);
    const env = { ...roots.env, DLINE_CORE: sidecarBinary, OPENAI_BASE_URL: server.url, OPENAI_MODEL: "m" };
    const { stdout } = await dline(env, ["task", "write x", "--workspace", workspace]);
    expect(stdout).toContain("write_to_file");
    expect(fs.existsSync(path.join(workspace, "x.txt"))).toBe(false);
  });
});
