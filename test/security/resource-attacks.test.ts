/**
 * What a model's output can cost the sidecar, and what a neighbour (another local user) can
 * read of it, against the real dist/dline-core: a command that prints 100 MB, a 70 MB reply,
 * and the modes of every file under the three roots. Each `attack` holds when every check in
 * it passes; the file ends with "security attacks: N tried, N held" and the tally line.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe } from "vitest";
import { SettingsScope } from "../../core/src/gen/dline/v1/settings_pb.js";
import { TaskStatus, type TaskEvent } from "../../core/src/gen/dline/v1/task_pb.js";
import { startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import type { ScriptTurn } from "../model-server/script.js";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { attack, attackLine, check, errorCode, stopOrKill, tallyLine } from "./helpers.js";

let main: RunningSidecar;
const servers: ModelServerProcess[] = [];
const sidecars: RunningSidecar[] = [];

beforeAll(async () => {
  // umask 022, as most users have: the core must set its own modes, not rely on the umask.
  process.umask(0o022);
  main = await startSidecar();
  sidecars.push(main);
});
afterAll(async () => {
  console.log(attackLine());
  console.log(tallyLine());
  await Promise.all(servers.map((s) => s.stop()));
  await Promise.all(sidecars.map((s) => stopOrKill(s)));
  for (const s of sidecars) fs.rmSync(s.roots.base, { recursive: true, force: true });
});

async function scripted(sidecar: RunningSidecar, turns: ScriptTurn[]): Promise<string> {
  const server = await spawnModelServer({ apiKey: TEST_KEY, turns });
  servers.push(server);
  const profileId = `res-${servers.length}`;
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
    // aborted or refused: the events so far
  } finally {
    clearTimeout(timer);
  }
  return events;
}

function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
}

function lastStatus(events: TaskEvent[]): TaskStatus | undefined {
  const last = [...events].reverse().find((e) => e.event.case === "statusChanged");
  return last?.event.case === "statusChanged" ? last.event.value.status : undefined;
}

describe("a model's output costs bounded memory", () => {
  attack("three commands printing 100 MB each: the sidecar keeps a head and a tail, the log has it all", async () => {
    await main.clients.settings.updateSettings({
      scope: SettingsScope.GLOBAL,
      patch: {
        autoApprovalSettings: { enabled: true, executeSafeCommands: true, executeAllCommands: true, maxRequests: 100 },
      },
    });
    const command = "head -c 100000000 /dev/zero | tr '\\0' 'a' | fold -w 100";
    const before = rssMb(main.process.handshake.pid);
    const tasks: { taskId: string; events: TaskEvent[] }[] = [];
    for (let i = 0; i < 3; i++) {
      const ws = makeWorkspace(fs.mkdtempSync(path.join(main.roots.base, `big-${i}-`)));
      const profileId = await scripted(main, [
        { toolCalls: [{ id: "big", name: "execute_command", input: { command, requires_approval: false } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ]);
      const { taskId } = await main.clients.tasks.newTask({ workspaceRoot: ws, text: "print a lot", profileId });
      tasks.push({ taskId, events: await follow(main, taskId, 120_000) });
    }
    const after = rssMb(main.process.handshake.pid);
    console.log(`security: 3 commands of 100 MB output: RSS ${before.toFixed(0)} -> ${after.toFixed(0)} MB`);
    for (const { taskId, events } of tasks) {
      check("the task completed", lastStatus(events) === TaskStatus.COMPLETED);
      const streamed = events.reduce((n, e) => n + (e.event.case === "toolOutput" ? e.event.value.chunk.length : 0), 0);
      check(
        "the streamed output is bounded (at most 300,000 characters)",
        streamed > 0 && streamed < 300_000,
        `${streamed}`,
      );
      const finished = events.find((e) => e.event.case === "toolFinished");
      const result = finished?.event.case === "toolFinished" ? finished.event.value.result : "";
      check(
        "the result has the head, a note and the tail",
        /^Output:\naaaa/.test(result) && /characters omitted/.test(result) && result.length < 70 * 1024,
        result.slice(0, 100),
      );
      const stored = await main.clients.tasks.getTask({ taskId });
      const largest = Math.max(...stored.messages.map((m) => m.text.length + m.detail.length));
      check("no stored message is large", largest < 200 * 1024, `${largest}`);
      const logs = path.join(main.roots.docsDir, "tasks", taskId, "tmp", "command-logs");
      const size = fs.readdirSync(logs).reduce((n, f) => n + fs.statSync(path.join(logs, f)).size, 0);
      check("the command log holds the whole output", size >= 100_000_000 && size < 110_000_000, `${size}`);
    }
    check(
      "RSS grew by less than 150 MB while the tasks are kept",
      after - before < 150,
      `${before.toFixed(0)} -> ${after.toFixed(0)} MB`,
    );
  });

  attack("a 70 MB reply: the task stays readable (GetTask, Subscribe), after a restart too", async () => {
    const ws = makeWorkspace(fs.mkdtempSync(path.join(main.roots.base, "reply-")));
    const huge = "All work and no play. ".repeat(Math.ceil(70_000_000 / 22));
    const profileId = await scripted(main, [{ text: huge, textChunkChars: 1_000_000 }]);
    const { taskId } = await main.clients.tasks.newTask({ workspaceRoot: ws, text: "say a lot", profileId });
    const events = await follow(main, taskId, 120_000);
    check(
      "the task ended its turn",
      lastStatus(events) === TaskStatus.COMPLETED,
      `status ${String(lastStatus(events))}`,
    );
    const task = await main.clients.tasks.getTask({ taskId }).catch(() => undefined);
    check("GetTask answers", task !== undefined);
    const reply = task?.messages.find((m) => m.text.startsWith("All work"));
    check(
      "the reply is kept, cut with a note",
      reply !== undefined &&
        reply.text.startsWith("All work") &&
        /The reply was cut here/.test(reply.text) &&
        reply.text.length < 1_000_000,
      `${reply?.text.length}`,
    );
    check("Subscribe from the start answers", (await follow(main, taskId, 30_000)).length > 0);
    await stopOrKill(main);
    sidecars.splice(sidecars.indexOf(main), 1);
    main = await startSidecar({ roots: main.roots });
    sidecars.push(main);
    check("GetTask answers after a restart", (await errorCode(main.clients.tasks.getTask({ taskId }))) === "ok");
  });
});

describe("what a neighbour can read", () => {
  attack(
    "every file under the three roots is 0600 and every folder 0700 (tasks, databases, logs, checkpoints)",
    async () => {
      const ws = makeWorkspace(fs.mkdtempSync(path.join(main.roots.base, "modes-")), {
        ".env": "TOKEN=neighbour-must-not-read\n",
      });
      await main.clients.settings.updateSettings({
        scope: SettingsScope.GLOBAL,
        patch: {
          autoApprovalSettings: {
            enabled: true,
            readFiles: true,
            editFiles: true,
            executeSafeCommands: true,
            maxRequests: 100,
          },
        },
      });
      const profileId = await scripted(main, [
        {
          toolCalls: [
            { name: "read_file", input: { path: ".env" } },
            { name: "write_to_file", input: { path: "src/new.txt", content: "new\n" } },
            { name: "execute_command", input: { command: "echo hello", requires_approval: false } },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ]);
      const { taskId } = await main.clients.tasks.newTask({ workspaceRoot: ws, text: "modes", profileId });
      check("the task completed (control)", lastStatus(await follow(main, taskId, 60_000)) === TaskStatus.COMPLETED);
      await main.clients.settings.setSecret({ profileId, name: "other", value: "x".repeat(20) });
      const wide: string[] = [];
      let files = 0;
      let dirs = 0;
      const walk = (p: string) => {
        const st = fs.lstatSync(p);
        if (st.isSymbolicLink()) return;
        if (st.isDirectory()) {
          dirs++;
          if (st.mode & 0o077) wide.push(`${p} ${(st.mode & 0o777).toString(8)}`);
          for (const name of fs.readdirSync(p)) walk(path.join(p, name));
        } else {
          files++;
          if (st.mode & 0o077) wide.push(`${p} ${(st.mode & 0o777).toString(8)}`);
        }
      };
      for (const root of [main.roots.dlineDir, main.roots.homeDir, main.roots.docsDir]) walk(root);
      console.log(
        `security: modes: ${files} files and ${dirs} folders under the three roots, ${wide.length} readable by others`,
      );
      check("files and folders were found (control)", files > 20 && dirs > 10, `${files} files, ${dirs} folders`);
      check("nothing under the roots is open to group or others", wide.length === 0, wide.slice(0, 12).join("\n"));
      check(
        "the workspace's own new file keeps the usual mode",
        (fs.statSync(path.join(ws, "src/new.txt")).mode & 0o777) === 0o644,
      );
    },
  );
});
