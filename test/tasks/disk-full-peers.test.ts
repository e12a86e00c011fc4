/**
 * A sidecar that started while the disk was full could not publish how other windows reach it
 * (its peer registry entry is a file). Once space is freed it publishes it without a restart:
 * a window that looks for it then follows and answers the tasks it runs (one that looked before
 * does not see the task's events until its owner stops, as for any owner it cannot reach). Real
 * sidecars, roots on a small tmpfs (mounted for the test: this needs root; the test says why it
 * is skipped otherwise).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AskKind, TaskStatus } from "../../core/src/gen/dline/v1/task_pb.js";
import { fillDisk, mountSmallTmpfs, rootsOn } from "../helpers/small-disk.js";
import { startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import { configureModel, makeWorkspace } from "../runtime/harness.js";
import type { ModelServerProcess } from "../model-server/spawn.js";
import { readIn, watch, writeThenComplete } from "./follow-helpers.js";

const mount = mountSmallTmpfs(12);
const mounted = "dir" in mount ? mount : undefined;
const sidecars: RunningSidecar[] = [];
let server: ModelServerProcess | undefined;

afterAll(async () => {
  await Promise.all(sidecars.map((s) => s.stop()));
  await server?.stop();
  mounted?.unmount();
}, 60_000);

async function waitFor(check: () => boolean): Promise<void> {
  for (let i = 0; i < 600 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  expect(check()).toBe(true);
}

describe.skipIf(!mounted)(
  `other windows reach a sidecar started on a full disk once space is freed ${mounted ? "" : `(skipped: ${"reason" in mount ? mount.reason : ""})`}`,
  () => {
    it("its peer entry is published after the disk is freed, and a task it runs is answered from another window", async () => {
      const roots = rootsOn(mounted!.dir);
      const first = await startSidecar({ roots });
      sidecars.push(first);
      const model = await configureModel(first.clients, "openai", { turns: writeThenComplete() });
      server = model.server;
      await first.stop();
      const peersDir = path.join(roots.dlineDir, "data", "peers");

      const filler = fillDisk(mounted!.dir);
      const owner = await startSidecar({ roots });
      sidecars.push(owner);
      const entry = path.join(peersDir, `${owner.process.handshake.pid}.json`);
      // A window's first calls load the app, which starts the peer endpoint: it listens, and its
      // entry cannot be written (it says so in its log).
      await owner.clients.history.listTasks({}).catch(() => undefined);
      await waitFor(() =>
        fs.readFileSync(owner.stderrFile, "utf8").includes("other Dline windows cannot reach this one"),
      );
      expect(fs.existsSync(entry)).toBe(false);

      fs.rmSync(filler);
      // Before, the entry was written once, at start: the sidecar stayed out of reach until it restarted.
      await waitFor(() => fs.existsSync(entry));
      const workspace = makeWorkspace(fs.mkdtempSync(path.join(os.tmpdir(), "dline-diskfull-peers-ws-")));
      const { taskId } = await owner.clients.tasks.newTask({
        workspaceRoot: workspace,
        text: "Write notes.txt",
        profileId: model.profileId,
      });
      const follower = await startSidecar({ roots });
      sidecars.push(follower);
      const followed = watch(follower.clients, taskId);
      const ask = await followed.ask(AskKind.TOOL_APPROVAL);
      await follower.clients.tasks.respond({ taskId, askId: ask.askId, approve: true, text: "" });
      await followed.status(TaskStatus.COMPLETED);
      expect(readIn(workspace, "notes.txt")).toBe("written by dline\n");
      await followed.stop();
    });
  },
);
