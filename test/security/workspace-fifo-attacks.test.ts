/**
 * A workspace with a named pipe (FIFO) where git reads a file, against the real dist/dline-core:
 * git opens a `.gitignore` it finds while scanning, and opening a FIFO that nobody writes waits
 * forever. A task in such a workspace must still finish, checkpoints must say what is wrong, and
 * no git process may be left waiting, neither while the sidecar runs nor after it stopped.
 * Each `attack` holds when every check in it passes; the file ends with "security attacks: N
 * tried, N held" and the tally line.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe } from "vitest";
import { CheckpointState } from "../../core/src/gen/dline/v1/checkpoint_pb.js";
import { SettingsScope } from "../../core/src/gen/dline/v1/settings_pb.js";
import { TaskStatus, type TaskEvent } from "../../core/src/gen/dline/v1/task_pb.js";
import { startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import type { ScriptTurn } from "../model-server/script.js";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { attack, attackLine, check, stopOrKill, tallyLine, waitFor, withDeadline } from "./helpers.js";

const servers: ModelServerProcess[] = [];
const sidecars: RunningSidecar[] = [];

afterAll(async () => {
  console.log(attackLine());
  console.log(tallyLine());
  await Promise.all(servers.map((s) => s.stop()));
  await Promise.all(sidecars.map((s) => stopOrKill(s)));
  // A git an old build left waiting would keep the test's folders busy: it is ended here.
  for (const s of sidecars) {
    for (const pid of gitProcessesIn(s.roots.base)) killQuietly(pid);
    fs.rmSync(s.roots.base, { recursive: true, force: true });
  }
});

let main: RunningSidecar;
beforeAll(async () => {
  main = await startSidecar();
  sidecars.push(main);
  await main.clients.settings.updateSettings({
    scope: SettingsScope.GLOBAL,
    patch: { autoApprovalSettings: { enabled: true, readFiles: true, editFiles: true, maxRequests: 100 } },
  });
});

/** Running git processes whose working folder lies under `dir` (the checkpoints run git in the workspace). */
function gitProcessesIn(dir: string): number[] {
  const found: number[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const comm = fs.readFileSync(`/proc/${name}/comm`, "utf8").trim();
      const cwd = fs.readlinkSync(`/proc/${name}/cwd`);
      if (comm === "git" && (cwd === dir || cwd.startsWith(`${dir}/`))) found.push(Number(name));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Gone.
  }
}

async function scripted(sidecar: RunningSidecar, turns: ScriptTurn[]): Promise<string> {
  const server = await spawnModelServer({ apiKey: TEST_KEY, turns });
  servers.push(server);
  const profileId = `fifo-${servers.length}`;
  await sidecar.clients.settings.upsertProfile({
    profile: {
      id: profileId,
      name: profileId,
      provider: "openai",
      baseUrl: server.url,
      model: "m",
      contextWindow: 1_000_000n,
    },
  });
  await sidecar.clients.settings.setSecret({ profileId, name: "api_key", value: TEST_KEY });
  return profileId;
}

/** The task's events until it ends (or `ms` passed: a hung task is a failed check, not a hung test). */
async function follow(sidecar: RunningSidecar, taskId: string, ms: number): Promise<TaskEvent[]> {
  const events: TaskEvent[] = [];
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  try {
    for await (const res of sidecar.clients.tasks.subscribe({ taskId, afterSeq: 0n }, { signal: controller.signal })) {
      events.push(res.event!);
      const e = res.event!.event;
      if (
        e.case === "statusChanged" &&
        [TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED, TaskStatus.INTERRUPTED].includes(e.value.status)
      )
        break;
    }
  } catch {
    // aborted: the events so far
  } finally {
    clearTimeout(timer);
  }
  return events;
}

function lastStatus(events: TaskEvent[]): TaskStatus | undefined {
  const last = [...events].reverse().find((e) => e.event.case === "statusChanged");
  return last?.event.case === "statusChanged" ? last.event.value.status : undefined;
}

/** A workspace with a FIFO named `.gitignore` in a folder (nobody writes it) and one named `.gitattributes`. */
function workspaceWithFifos(base: string): string {
  const ws = makeWorkspace(base, { "lib/util.txt": "util\n", "docs/guide.txt": "guide\n" });
  execFileSync("mkfifo", [path.join(ws, "lib", ".gitignore")]);
  execFileSync("mkfifo", [path.join(ws, "docs", ".gitattributes")]);
  return ws;
}

const editThenComplete: ScriptTurn[] = [
  { toolCalls: [{ name: "write_to_file", input: { path: "src/app.txt", content: "edited by the task\n" } }] },
  { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
];

describe("a named pipe where git reads a file", () => {
  attack(
    "a FIFO named .gitignore in the workspace: the task finishes, checkpoints name the FIFO, no git process is left waiting",
    async () => {
      const ws = workspaceWithFifos(fs.mkdtempSync(path.join(main.roots.base, "fifo-")));
      const profileId = await scripted(main, editThenComplete);
      const { taskId } = await main.clients.tasks.newTask({ workspaceRoot: ws, text: "edit the app", profileId });
      const events = await follow(main, taskId, 60_000);
      check("the task completed", lastStatus(events) === TaskStatus.COMPLETED, `status ${String(lastStatus(events))}`);
      check(
        "the edit was written",
        fs.readFileSync(path.join(ws, "src", "app.txt"), "utf8") === "edited by the task\n",
      );
      const status = await withDeadline(main.clients.checkpoints.getStatus({ workspaceRoot: ws }), 10_000);
      console.log(`security: checkpoint status in a workspace with FIFOs: ${status?.message}`);
      check(
        "checkpoints say which file is a FIFO",
        status !== undefined && status.message.includes(path.join("lib", ".gitignore")) && /FIFO/.test(status.message),
        status?.message ?? "no answer",
      );
      check("Retry is offered", status?.canRetry === true);
      check(
        "no git process is left waiting",
        await waitFor(() => gitProcessesIn(ws).length === 0, 10_000),
        `${gitProcessesIn(ws).length} left`,
      );
      check(
        "the FIFOs are still there, untouched",
        fs.statSync(path.join(ws, "lib", ".gitignore")).isFIFO() &&
          fs.statSync(path.join(ws, "docs", ".gitattributes")).isFIFO(),
      );

      // Once the FIFOs are gone, Retry brings checkpoints back.
      fs.rmSync(path.join(ws, "lib", ".gitignore"));
      fs.rmSync(path.join(ws, "docs", ".gitattributes"));
      const retried = await withDeadline(main.clients.checkpoints.retry({ workspaceRoot: ws }), 60_000);
      check(
        "after the FIFOs are removed, Retry makes checkpoints ready",
        retried?.status?.state === CheckpointState.READY,
        retried?.status?.message ?? "no answer",
      );
    },
  );

  attack(
    "the sidecar stops while checkpoints scan a workspace with a FIFO .gitignore: no git process outlives it",
    async () => {
      const sidecar = await startSidecar();
      sidecars.push(sidecar);
      await sidecar.clients.settings.updateSettings({
        scope: SettingsScope.GLOBAL,
        patch: { autoApprovalSettings: { enabled: true, readFiles: true, editFiles: true, maxRequests: 100 } },
      });
      const ws = workspaceWithFifos(fs.mkdtempSync(path.join(sidecar.roots.base, "fifo-stop-")));
      const profileId = await scripted(sidecar, editThenComplete);
      await sidecar.clients.tasks.newTask({ workspaceRoot: ws, text: "edit the app", profileId });
      // The baseline's scan starts with the task; once it runs (or has already been stopped on
      // the FIFO), the sidecar is stopped (its stdin closed).
      let scanning = false;
      for (
        const end = Date.now() + 20_000;
        !scanning && Date.now() < end;
        await new Promise((r) => setTimeout(r, 50))
      ) {
        const status = await sidecar.clients.checkpoints.getStatus({ workspaceRoot: ws });
        scanning = status.phase === "scanning" || status.state === CheckpointState.FAILED;
      }
      check("the checkpoints' scan started", scanning);
      const stopped = await withDeadline(sidecar.stop(), 20_000);
      check("the sidecar stopped", stopped !== undefined);
      check(
        "no git process outlives the sidecar",
        await waitFor(() => gitProcessesIn(ws).length === 0, 5_000),
        `${gitProcessesIn(ws).length} left`,
      );
    },
  );
});
