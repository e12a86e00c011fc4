// From a bug hunt in a terminal (babel, 27,669 files): the first task's first edit was written
// at once, what the file held kept only in memory until the baseline's scan (seconds) was saved.
// Ctrl-C or a kill then left the file overwritten and the task without a checkpoint: the
// person's original was gone for good. The edit now waits for the baseline, as the spec says.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeTestRoots } from "../helpers/sidecar.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { captured } from "../helpers/items.js";
import { checkpointsOf, cliEnv, runCli, startCli, type CliChild } from "../helpers/cli-child.js";
import { holdGitStatus, releaseHeldGits } from "../checkpoints/fixtures/held-git.js";

async function until(condition: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(condition()).toBe(true);
}

const servers: ModelServerProcess[] = [];
const clis: CliChild[] = [];
afterEach(async () => {
  releaseHeldGits();
  await Promise.all(clis.splice(0).map((c) => c.stop()));
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

describe("a task stopped while its first edit waits for the baseline", () => {
  it.each(["SIGINT", "SIGKILL"] as const)(
    "leaves the person's file as it was (the CLI ended with %s during the baseline's scan)",
    async (signal) => {
      const roots = makeTestRoots();
      const workspace = makeWorkspace(roots.base, { "precious.txt": "the person's original\n" });
      const script = {
        apiKey: TEST_KEY,
        turns: [
          { toolCalls: [{ name: "write_to_file", input: { path: "precious.txt", content: "overwritten\n" } }] },
          { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
        ],
      };
      const server = await spawnModelServer(script);
      servers.push(server);
      // The baseline's scan is held, as a first scan of a large workspace takes seconds.
      const held = holdGitStatus(roots.base);
      const cli = startCli(
        ["task", "overwrite it", "--workspace", workspace, "--yes"],
        cliEnv(roots, server, { PATH: held.path }),
      );
      clis.push(cli);
      await until(() => held.holding() && cli.output().includes("write_to_file precious.txt"), 30_000);
      // The edit is approved (--yes) and waits: nothing written yet.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(fs.readFileSync(path.join(workspace, "precious.txt"), "utf8")).toBe("the person's original\n");
      const sidecar = cli.sidecarPid();
      cli.child.kill(signal);
      await cli.exited;
      // Its sidecar stops once the CLI is gone (stdin closed).
      await until(() => {
        try {
          process.kill(sidecar, 0);
          return false;
        } catch {
          return true;
        }
      }, 30_000);
      held.release();
      expect(fs.readFileSync(path.join(workspace, "precious.txt"), "utf8")).toBe("the person's original\n");

      // The next task's baseline holds the file as the person left it: a restore brings it back.
      const again = await spawnModelServer(script);
      servers.push(again);
      const env = cliEnv(roots, again, {});
      const next = await runCli(["task", "overwrite it", "--workspace", workspace, "--yes"], env);
      expect(fs.readFileSync(path.join(workspace, "precious.txt"), "utf8")).toBe("overwritten\n");
      const taskId = captured(/task (\S+)/.exec(next.stderr), "the task id on stderr");
      const baseline = (await checkpointsOf(env, taskId)).find((c) => c.kind === "CHECKPOINT_KIND_BASELINE")!.id;
      await runCli(["restore", taskId, baseline, "--mode", "files"], env);
      expect(fs.readFileSync(path.join(workspace, "precious.txt"), "utf8")).toBe("the person's original\n");
    },
    90_000,
  );
});
