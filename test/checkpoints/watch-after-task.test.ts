// Through the real sidecar and scripted model: an editor's sidecar watches a task's workspace soon
// after the task is complete (the next task's checkpoints then take what the watcher saw, not a
// git status over every file), and the CLI's (`serve --one-command`, stopped after its command)
// begins no such watch, whose walk of every folder it would only close again. Before, both began
// it 3 s after a completion: too late for an editor's next task, needless for the CLI's sidecar.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { makeTestRoots, startSidecar } from "../helpers/sidecar.js";
import { configureModel, followUntilDone, makeWorkspace, setAutoApproval } from "../runtime/harness.js";

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c().catch(() => {})));
});

/** How many inotify watches process `pid` has on the folder with this inode (Linux). */
function inotifyWatchesOn(pid: number, inode: number): number {
  const tag = ` ino:${inode.toString(16)} `;
  let count = 0;
  let fds: string[];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fdinfo`);
  } catch {
    return 0;
  }
  for (const fd of fds) {
    let info: string;
    try {
      info = fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8");
    } catch {
      continue; // closed meanwhile
    }
    count += info.split("\n").filter((l) => l.startsWith("inotify ") && l.includes(tag)).length;
  }
  return count;
}

/** A sidecar started with `args` that ran one task editing src/app.txt to its completion. */
async function sidecarAfterOneTask(args: string[]) {
  const roots = makeTestRoots();
  const sidecar = await startSidecar({ roots, args });
  cleanups.push(() => sidecar.stop());
  const { clients } = sidecar;
  const workspace = makeWorkspace(roots.base, { "src/app.txt": "as the person left it\n", "lib/util.txt": "u\n" });
  const { server, profileId } = await configureModel(clients, "openai", {
    turns: [
      { toolCalls: [{ name: "write_to_file", input: { path: "src/app.txt", content: "edited\n" } }] },
      { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
    ],
  });
  cleanups.push(() => server.stop());
  await setAutoApproval(clients, { editFiles: true });
  const { taskId } = await clients.tasks.newTask({ workspaceRoot: workspace, text: "edit app.txt", profileId });
  const events = await followUntilDone(clients, taskId);
  const status = events.findLast((e) => e.event.case === "statusChanged");
  expect(status?.event.case === "statusChanged" && status.event.value.status).toBe(TaskStatus.COMPLETED);
  const pid = sidecar.process.handshake.pid;
  const srcInode = fs.statSync(path.join(workspace, "src")).ino;
  return { watches: () => inotifyWatchesOn(pid, srcInode) };
}

describe("after a task's completion", () => {
  it("an editor's sidecar watches the workspace; the CLI's (--one-command) does not", async () => {
    const [editor, cli] = await Promise.all([sidecarAfterOneTask([]), sidecarAfterOneTask(["--one-command"])]);
    expect(cli.watches()).toBe(0);
    await expect.poll(() => editor.watches(), { timeout: 20_000, interval: 100 }).toBeGreaterThan(0);
    // The CLI's sidecar had as long, and more: it still watches nothing.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(cli.watches()).toBe(0);
  }, 60_000);
});
