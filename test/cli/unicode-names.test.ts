// Found from a terminal: a command made an NFC "café.txt" and an NFD one (e + a combining accent,
// as macOS tools write); `dline compare` printed "added café.txt" twice and the restore
// "deleted: café.txt" twice, which read as one file listed twice. Each is now told apart.
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeTestRoots, repoRoot } from "../helpers/sidecar.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { captured } from "../helpers/items.js";
import { cliEnv } from "../helpers/cli-child.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");
const servers: ModelServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

const NFC = "caf\u00e9.txt";
const NFD = "cafe\u0301.txt";

describe("names that differ only in Unicode form", () => {
  it("compare and restore tell an NFC and an NFD name apart", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base, { "src/app.js": "app\n" });
    const command = "printf one > \"$(printf 'caf\\303\\251.txt')\" && printf two > \"$(printf 'cafe\\314\\201.txt')\"";
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        { toolCalls: [{ name: "execute_command", input: { command, requires_approval: false } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ],
    });
    servers.push(server);
    const env = cliEnv(roots, server);
    const task = await run(cli, ["task", "make them", "--workspace", workspace, "--yes"], { env });
    const taskId = captured(/task (\S+)/.exec(task.stderr), "the task id on stderr");
    expect(
      fs
        .readdirSync(workspace)
        .filter((n) => n.startsWith("caf"))
        .sort(),
    ).toEqual([NFD, NFC].sort());
    const { checkpoints } = JSON.parse((await run(cli, ["--json", "checkpoints", taskId], { env })).stdout) as {
      checkpoints: { id: string; kind: string }[];
    };
    const baseline = checkpoints.find((c) => c.kind === "CHECKPOINT_KIND_BASELINE")!.id;

    const compare = (await run(cli, ["compare", taskId, baseline], { env })).stdout.split("\n");
    const added = compare.filter((l) => l.includes("caf"));
    expect(added).toHaveLength(2);
    expect(new Set(added).size).toBe(2);
    expect(added).toContain(`  added     ${NFC} (name in composed Unicode, NFC)`);
    expect(added).toContain(`  added     ${NFD} (name in decomposed Unicode, NFD)`);

    const restore = (await run(cli, ["restore", taskId, baseline, "--mode", "files"], { env })).stdout.split("\n");
    const deleted = restore.filter((l) => l.includes("caf"));
    expect(deleted.sort()).toEqual(
      [
        `  deleted: ${NFC} (name in composed Unicode, NFC)`,
        `  deleted: ${NFD} (name in decomposed Unicode, NFD)`,
      ].sort(),
    );
    expect(fs.readdirSync(workspace).filter((n) => n.startsWith("caf"))).toEqual([]);
  });
});
