/**
 * `dline checkpoints` (and compare, restore) while another Dline window holds the workspace's
 * checkpoint repository (its baseline of a large workspace, a restore): the command waits for it,
 * and says so once on stderr, naming that process; it waited in silence before. The other window
 * is a separate node process holding the real repository lock (the checkpoint tests' driver).
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ModelServerProcess } from "../model-server/spawn.js";
import { repoRoot } from "../helpers/sidecar.js";
import { startCli, type CliChild } from "../helpers/cli-child.js";
import { cliSandbox } from "../helpers/cli-tasks.js";
import { buildDriver, holding, runDriver } from "../checkpoints/driver-process.js";
import type { Sandbox } from "../checkpoints/helpers.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");
const servers: ModelServerProcess[] = [];
const children: CliChild[] = [];
const holders: ReturnType<typeof runDriver>[] = [];
beforeAll(buildDriver);
afterEach(async () => {
  for (const h of holders.splice(0)) h.child.kill("SIGKILL");
  await Promise.all(children.splice(0).map((c) => c.stop()));
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("a checkpoint command while another window holds the checkpoint repository", () => {
  it("says once that it waits for that window, by its process id, then answers once it lets go", async () => {
    const { roots, workspace, env } = await cliSandbox(
      [{ toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] }],
      servers,
    );
    await run(cli, ["task", "one", "--workspace", workspace, "--yes"], { env });
    const taskId = (JSON.parse((await run(cli, ["--json", "history"], { env })).stdout) as { tasks: { id: string }[] })
      .tasks[0]!.id;

    // Another window: the same roots (the documents root holds the checkpoints), the lock held.
    const holder = runDriver({ base: roots.base, home: roots.home, workspace } as Sandbox, "other-window", 0, [], {
      holdLock: true,
    });
    holders.push(holder);
    await holding(holder);

    const listing = startCli(["checkpoints", taskId], env);
    children.push(listing);
    const said = `checkpoints: Checkpoints are waiting for another Dline window using this workspace's checkpoints (process ${holder.child.pid}).`;
    await until(() => listing.stderr().includes(said), "the wait to be said");
    expect(listing.stdout()).toBe("");

    // The other window goes (killed: its lock is taken over at once); the listing answers.
    holder.child.kill("SIGKILL");
    expect(await listing.exited).toBe(0);
    expect(listing.stdout()).toMatch(/ baseline\n/);
    expect(listing.stderr().split(said).length - 1).toBe(1);
  });
});

describe("Ctrl-C during a restore", () => {
  // Found in a crash test: Ctrl-C left at once without a word (exit 130), and the sidecar then
  // finished the restore after the prompt came back, or stopped it part-way.
  async function restoreWaiting(): Promise<{
    restore: CliChild;
    holder: ReturnType<typeof runDriver>;
    file: string;
    taskId: string;
    env: NodeJS.ProcessEnv;
  }> {
    const { roots, workspace, env } = await cliSandbox(
      [
        { toolCalls: [{ name: "write_to_file", input: { path: "notes.md", content: "by the task\n" } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ],
      servers,
    );
    fs.writeFileSync(path.join(workspace, "notes.md"), "mine\n");
    await run(cli, ["task", "one", "--workspace", workspace, "--yes"], { env });
    const taskId = (JSON.parse((await run(cli, ["--json", "history"], { env })).stdout) as { tasks: { id: string }[] })
      .tasks[0]!.id;
    const { checkpoints } = JSON.parse((await run(cli, ["--json", "checkpoints", taskId], { env })).stdout) as {
      checkpoints: { id: string }[];
    };
    // Another window holds the checkpoints: the restore is under way, waiting for it.
    const holder = runDriver({ base: roots.base, home: roots.home, workspace } as Sandbox, "other-window", 0, [], {
      holdLock: true,
    });
    holders.push(holder);
    await holding(holder);
    const restore = startCli(["restore", taskId, checkpoints[0]!.id, "--mode", "files"], env);
    children.push(restore);
    await until(() => restore.stderr().includes("Checkpoints are waiting for another Dline window"), "the wait");
    return { restore, holder, file: path.join(workspace, "notes.md"), taskId, env };
  }

  it("says the restore goes on, and it does: the answer and its undo are printed", async () => {
    const { restore, holder, file } = await restoreWaiting();
    restore.child.kill("SIGINT");
    await until(() => restore.stderr().includes("The restore goes on until it has ended"), "the notice");
    holder.child.kill("SIGKILL");
    expect(await restore.exited).toBe(0);
    expect(restore.stdout()).toMatch(/^restored 1 file\(s\), deleted 0\n {2}restored: notes\.md\nundo with: /);
    expect(fs.readFileSync(file, "utf8")).toBe("mine\n");
  });

  it("a second Ctrl-C leaves, saying the restore may have stopped part-way and how to finish or undo it", async () => {
    const { restore } = await restoreWaiting();
    restore.child.kill("SIGINT");
    await until(() => restore.stderr().includes("The restore goes on until it has ended"), "the notice");
    restore.child.kill("SIGINT");
    expect(await restore.exited).toBe(130);
    expect(restore.stderr()).toMatch(
      /dline: left before the restore ended: it may have stopped part-way\. Run it again to finish it\. If it did stop part-way, dline checkpoints \S+ says so and names the "before restore" checkpoint that puts the files back as they were; if it ended, that is the "before restore" checkpoint it lists from \d{4}-\d\d-\d\d \d\d:\d\d:\d\d on \(none: it did not begin\)\.\n$/,
    );
  });

  it("a sidecar killed during the restore: the CLI says the restore may have stopped part-way, and how to finish or undo it", async () => {
    const { restore, holder, file, taskId, env } = await restoreWaiting();
    const sidecar = Number(
      fs.readFileSync(`/proc/${restore.child.pid}/task/${restore.child.pid}/children`, "utf8").trim().split(" ")[0],
    );
    process.kill(sidecar, "SIGKILL");
    expect(await restore.exited).toBe(1);
    expect(restore.stderr()).toMatch(
      /The restore may have stopped part-way\. Run it again to finish it\. If it did stop part-way, dline checkpoints \S+ says so and names the "before restore" checkpoint that puts the files back as they were; if it ended, that is the "before restore" checkpoint it lists from \d{4}-\d\d-\d\d \d\d:\d\d:\d\d on \(none: it did not begin\)\.\ndline: the sidecar \(dline-core\) stopped unexpectedly \(SIGKILL\)/,
    );
    // Killed while it waited for the other window: nothing was touched and no "before restore"
    // checkpoint was saved, so the listing says nothing was cut short (before, the CLI said to
    // restore "the newest" one, which would have been an earlier restore's).
    holder.child.kill("SIGKILL");
    expect(fs.readFileSync(file, "utf8")).toBe("by the task\n");
    const listed = await run(cli, ["checkpoints", taskId], { env });
    expect(listed.stderr).not.toContain("cut short");
    expect(listed.stdout).not.toContain("before restore");
  });
});

describe("dline restore of a task that `dline task` runs in another terminal", () => {
  // Found using it: the restore stopped the run only after writing the files, so the command
  // went on writing after it; the terminal running the task then read a bare "[cancelled]".
  it("stops the run first, restores, and both terminals say so", async () => {
    const ticking =
      "end=$(( $(date +%s) + 60 )); while [ $(date +%s) -lt $end ]; do echo tick >> ticks.txt; sleep 0.005; done";
    const { workspace, env } = await cliSandbox(
      [
        { toolCalls: [{ name: "write_to_file", input: { path: "notes.md", content: "by the task\n" } }] },
        { toolCalls: [{ name: "execute_command", input: { command: ticking, requires_approval: false } }] },
      ],
      servers,
    );
    const task = startCli(["task", "tick", "--workspace", workspace, "--yes"], env);
    children.push(task);
    const ticks = path.join(workspace, "ticks.txt");
    await until(() => fs.existsSync(ticks), "the command to write");
    const taskId = (JSON.parse((await run(cli, ["--json", "history"], { env })).stdout) as { tasks: { id: string }[] })
      .tasks[0]!.id;
    const baseline = (await run(cli, ["checkpoints", taskId], { env })).stdout
      .split("\n")
      .find((l) => l.endsWith(" baseline"))!
      .slice(0, 12);

    const restored = await run(cli, ["restore", taskId, baseline], { env });
    expect(restored.stdout).toContain(`the task was running: stopped it first (dline resume ${taskId} goes on)\n`);
    expect(restored.stdout).toContain("  deleted: ticks.txt\n");
    expect(restored.stdout).toContain("  deleted: notes.md\n");
    expect(fs.existsSync(ticks)).toBe(false);
    expect(fs.existsSync(path.join(workspace, "notes.md"))).toBe(false);

    // The terminal running it ends once the restore is done, saying why its command stopped.
    await task.exited;
    expect(task.stdout()).toContain(
      "The task was stopped for a restore to the task's start before this call finished.",
    );
    expect(task.stdout()).toContain("[interrupted: the conversation was restored to an earlier point]");
    await new Promise((r) => setTimeout(r, 300));
    expect(fs.existsSync(ticks)).toBe(false);
  });
});
