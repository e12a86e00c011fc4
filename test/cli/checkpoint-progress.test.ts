import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeTestRoots, repoRoot } from "../helpers/sidecar.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { cliEnv } from "../helpers/cli-child.js";
import { gitShimBeforeStatus } from "../helpers/git-shim.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");
const servers: ModelServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

describe("checkpoint progress without a terminal", () => {
  it("a line per phase of the first baseline, each printed once as the phase starts: the staging line names how many files, not a count stale at once ('0 of 1,202')", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    // Enough files that staging reports its count as it goes (bulk check-in), with a thousands separator.
    fs.mkdirSync(path.join(workspace, "lib"));
    for (let i = 0; i < 1_200; i++)
      fs.writeFileSync(path.join(workspace, "lib", `m${i}.js`), `export const n = ${i};\n`);
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [{ toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] }],
    });
    servers.push(server);
    // git's scan takes a second more: on a loaded machine the sidecar (started before the CLI has
    // loaded the rest of itself) could otherwise end the whole baseline before the task is
    // followed, which then hears only "ready" (CI once).
    const PATH = gitShimBeforeStatus(path.join(roots.base, "slow-bin"), "sleep 1");
    const task = await run(cli, ["task", "look", "--workspace", workspace, "--yes"], {
      env: { ...cliEnv(roots, server), PATH },
    });
    const lines = task.stderr.split("\n").filter((l) => l.startsWith("checkpoints"));
    // The scan starts while the CLI connects (serve --workspace): by the time the task is
    // followed it may be scanning already, and the line without a phase is then not printed.
    const bare = lines.filter((l) => l === "checkpoints initializing");
    expect(bare.length).toBeLessThanOrEqual(1);
    expect(lines.slice(bare.length)).toEqual([
      "checkpoints initializing: scanning the workspace",
      // README.md, src/app.txt and lib/.
      "checkpoints initializing: taking in 1,202 files",
      "checkpoints ready",
    ]);
  });

  it("ready after a repair says what was repaired: a damaged shadow index was rebuilt", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base);
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      // One completion per task.
      turns: [1, 2].map(() => ({ toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] })),
    });
    servers.push(server);
    await run(cli, ["task", "first", "--workspace", workspace, "--yes"], { env: cliEnv(roots, server) });
    const checkpoints = path.join(roots.docsDir, "checkpoints");
    for (const repo of fs.readdirSync(checkpoints))
      fs.writeFileSync(path.join(checkpoints, repo, ".git", "index"), "not an index");
    const task = await run(cli, ["task", "next", "--workspace", workspace, "--yes"], { env: cliEnv(roots, server) });
    const ready = task.stderr.split("\n").filter((l) => l.startsWith("checkpoints ready"));
    expect(ready).toEqual([
      expect.stringMatching(
        /^checkpoints ready: The checkpoint index was damaged and has been rebuilt; no checkpoint was lost\. The damaged files were kept aside in .*index\.corrupt-/,
      ),
    ]);
  });
});
