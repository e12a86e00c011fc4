/**
 * A full disk while tasks run, against the real dist/dline-core with its three roots on a small
 * tmpfs (mounted for the test: this needs root, as CI and the development machines run; the
 * test says why it is skipped otherwise). The task fails with resource_exhausted "The disk is
 * full", the sidecar keeps serving, and nothing stored before is damaged: after space is freed
 * and the sidecar restarted, the earlier task and the settings are intact.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { SettingsScope } from "../../core/src/gen/dline/v1/settings_pb.js";
import { TaskStatus, type TaskEvent } from "../../core/src/gen/dline/v1/task_pb.js";
import { startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { fillDisk, mountSmallTmpfs, rootsOn } from "../helpers/small-disk.js";
import { attack, attackLine, check, stopOrKill, tallyLine, waitFor, withDeadline } from "./helpers.js";

const mount = mountSmallTmpfs(20);
const mounted = "dir" in mount ? mount : undefined;
let server: ModelServerProcess | undefined;
const sidecars: RunningSidecar[] = [];

afterAll(async () => {
  console.log(attackLine());
  console.log(tallyLine());
  // First (a lazy unmount detaches it at once): the small disk never outlives the file, even
  // when stopping the processes below takes longer than the hook may.
  mounted?.unmount();
  await Promise.all(sidecars.map((s) => stopOrKill(s)));
  await server?.stop();
}, 60_000);

async function follow(
  sidecar: RunningSidecar,
  taskId: string,
  ms: number,
  onEvent: (e: TaskEvent) => void = () => {},
): Promise<TaskEvent[]> {
  const events: TaskEvent[] = [];
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  try {
    for await (const res of sidecar.clients.tasks.subscribe({ taskId, afterSeq: 0n }, { signal: controller.signal })) {
      events.push(res.event!);
      onEvent(res.event!);
      const e = res.event!.event;
      if (
        e.case === "statusChanged" &&
        [TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED, TaskStatus.INTERRUPTED].includes(e.value.status)
      )
        break;
    }
  } catch {
    // ended (aborted, or the sidecar died)
  } finally {
    clearTimeout(timer);
  }
  return events;
}

describe.skipIf(!mounted)(`a full disk ${mounted ? "" : `(skipped: ${"reason" in mount ? mount.reason : ""})`}`, () => {
  attack(
    "the disk fills up while a task runs: the task fails with resource_exhausted, the sidecar keeps serving, nothing stored is damaged",
    async () => {
      const dir = mounted!.dir;
      const roots = rootsOn(dir);
      const workspace = makeWorkspace(fs.mkdtempSync(path.join(os.tmpdir(), "dline-diskfull-ws-")));
      // Each turn writes a file and runs a command with output; the model answers slowly, so the
      // disk fills up in the middle of the task.
      const turn = (i: number) => ({
        text: `step ${i} `.repeat(50),
        textChunkChars: 40,
        writeDelayMs: 20,
        toolCalls: [
          { name: "write_to_file", input: { path: `out/${i}.txt`, content: `${i}\n` } },
          { name: "execute_command", input: { command: `seq 1 2000`, requires_approval: false } },
        ],
      });
      server = await spawnModelServer({
        apiKey: TEST_KEY,
        turns: [
          ...Array.from({ length: 40 }, (_, i) => turn(i)),
          { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
        ],
      });
      const first = await startSidecar({ roots });
      sidecars.push(first);
      await first.clients.settings.upsertProfile({
        profile: { id: "p", name: "p", provider: "openai", baseUrl: server.url, model: "m", contextWindow: 100_000n },
      });
      await first.clients.settings.setSecret({ profileId: "p", name: "api_key", value: TEST_KEY });
      await first.clients.settings.updateSettings({
        scope: SettingsScope.GLOBAL,
        patch: {
          autoApprovalSettings: {
            enabled: true,
            readFiles: true,
            editFiles: true,
            executeSafeCommands: true,
            maxRequests: 1000,
          },
        },
      });
      // A task stored before the disk fills: it must come through intact.
      const { server: quick } = {
        server: await spawnModelServer({ apiKey: TEST_KEY, turns: [{ text: "earlier answer" }] }),
      };
      await first.clients.settings.upsertProfile({
        profile: { id: "q", name: "q", provider: "openai", baseUrl: quick.url, model: "m", contextWindow: 100_000n },
      });
      await first.clients.settings.setSecret({ profileId: "q", name: "api_key", value: TEST_KEY });
      const earlier = await first.clients.tasks.newTask({
        workspaceRoot: workspace,
        text: "an earlier task",
        profileId: "q",
      });
      await follow(first, earlier.taskId, 30_000);
      await quick.stop();
      const earlierMessages = (await first.clients.tasks.getTask({ taskId: earlier.taskId })).messages.map(
        (m) => m.text,
      );

      const { taskId } = await first.clients.tasks.newTask({
        workspaceRoot: workspace,
        text: "a long task",
        profileId: "p",
      });
      let steps = 0;
      const following = follow(first, taskId, 90_000, (e) => {
        if (e.event.case === "toolFinished") steps++;
      });
      await waitFor(() => steps >= 2, 30_000);
      const filler = fillDisk(dir);
      const events = await following;
      const errors = events
        .filter((e) => e.event.case === "error")
        .map((e) => (e.event.case === "error" ? e.event.value : undefined));
      console.log(
        `security: disk full after ${steps} tool calls: status ${TaskStatus[events.length ? (lastStatusOf(events) ?? 0) : 0]}, errors ${JSON.stringify(errors.map((e) => `${e?.code}: ${e?.message}`))}`,
      );
      check("the sidecar is alive", first.process.child.exitCode === null && first.process.child.signalCode === null);
      check(
        "the sidecar still answers Health",
        (await withDeadline(first.clients.system.health({}), 10_000))?.status === "ok",
      );
      check("the task failed", lastStatusOf(events) === TaskStatus.FAILED, `status ${String(lastStatusOf(events))}`);
      check(
        "with resource_exhausted: the disk is full",
        errors.some((e) => e?.code === "resource_exhausted" && /disk is full/i.test(e.message)),
        JSON.stringify(errors),
      );
      check("ListTasks still answers", (await withDeadline(first.clients.history.listTasks({}), 10_000)) !== undefined);
      // The disk still full: this sidecar's copy of the task, whose last save the disk refused,
      // is the newest one. Before, it was taken for a copy another process had changed (its
      // state on disk differed) and replaced by that older state: a window following the task
      // saw its stream end with the task still "running", and a new subscriber another status.
      const resubscribed = await follow(first, taskId, 10_000);
      check(
        "a new subscriber sees it failed",
        lastStatusOf(resubscribed) === TaskStatus.FAILED,
        `${lastStatusOf(resubscribed)}`,
      );
      // Space comes back; a restart recovers cleanly.
      fs.rmSync(filler);
      await stopOrKill(first);
      const second = await startSidecar({ roots });
      sidecars.push(second);
      const listed = (await second.clients.history.listTasks({})).tasks.map((t) => t.id);
      check(
        "both tasks are listed after the restart",
        listed.includes(earlier.taskId) && listed.includes(taskId),
        JSON.stringify(listed),
      );
      const again = (await second.clients.tasks.getTask({ taskId: earlier.taskId })).messages.map((m) => m.text);
      check(
        "the earlier task's messages are intact",
        JSON.stringify(again) === JSON.stringify(earlierMessages),
        JSON.stringify(again).slice(0, 200),
      );
      check(
        "the failed task opens",
        (await withDeadline(second.clients.tasks.getTask({ taskId }), 10_000)) !== undefined,
      );
      const profiles = (await second.clients.settings.listProfiles({})).profiles.map((p) => p.id);
      check("the profiles are intact", profiles.includes("p") && profiles.includes("q"));
      console.log(
        `security: after the restart: ${listed.length} tasks listed; stderr of the first sidecar: ${first.stderrFile}`,
      );
    },
  );
});

function lastStatusOf(events: TaskEvent[]): TaskStatus | undefined {
  const last = [...events].reverse().find((e) => e.event.case === "statusChanged");
  return last?.event.case === "statusChanged" ? last.event.value.status : undefined;
}

it.skipIf(!!mounted)("a full disk: skipped", () => {
  console.log(`disk-full test skipped: ${"reason" in mount ? mount.reason : ""}`);
});
void beforeAll;
