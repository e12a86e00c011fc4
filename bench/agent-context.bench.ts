// Requests and tokens of a 40-turn task over large files, through the real sidecar and the
// scripted model server with a real context window (its own token count). The baseline, from
// the same files in the same run, is an agent without context management: every read returned
// whole and the whole conversation sent each time (what the core did before), which stops being
// answerable at the first request larger than the window. Set DLINE_BENCH_CORE to run another
// dline-core build (e.g. an earlier one) through the same task.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execFileSync } from "node:child_process";
import { createDlineClients, spawnSidecar } from "../core/src/client/index.js";
import { SettingsScope } from "../core/src/gen/dline/v1/settings_pb.js";
import { TaskStatus } from "../core/src/gen/dline/v1/task_pb.js";
import { spawnModelServer } from "../test/model-server/spawn.js";
import type { ScriptTurn } from "../test/model-server/script.js";
import { countTextTokens } from "../test/model-server/tokens.js";
import { report } from "./helpers.js";

const binary = path.resolve(process.env.DLINE_BENCH_CORE ?? "dist/dline-core");
const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-bench-context-"));
const env = {
  ...process.env,
  HOME: base,
  DLINE_DIR: path.join(base, "d"),
  DLINE_HOME_DIR: path.join(base, "h"),
  DLINE_DOCS_DIR: path.join(base, "docs"),
};
const FILES = 12;
const FILE_BYTES = 120_000;

function sourceFile(bytes: number, seed: string): string {
  const lines: string[] = [];
  for (let i = 1, size = 0; size < bytes; i++) {
    const line = `export function ${seed}_${i}(input: number, factor = ${i % 97}): number { return input * factor + ${(i * 7919) % 1000}; } // ${seed} line ${i}`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join("\n")}\n`;
}

/** 40 model turns: read every file, read some again, edit, search, complete. */
function script(): ScriptTurn[] {
  const name = (i: number) => `src/module${i}.ts`;
  const turns: ScriptTurn[] = [];
  for (let i = 0; i < FILES; i++) turns.push({ toolCalls: [{ name: "read_file", input: { path: name(i) } }] });
  for (let i = 0; i < 10; i++) turns.push({ toolCalls: [{ name: "read_file", input: { path: name(i % 4) } }] });
  for (let i = 0; i < 12; i++) {
    const seed = `m${i}`;
    turns.push({
      toolCalls: [
        {
          name: "replace_in_file",
          input: {
            path: name(i),
            diff: `------- SEARCH\nexport function ${seed}_10(\n=======\nexport function ${seed}_ten(\n+++++++ REPLACE`,
          },
        },
      ],
    });
  }
  for (let i = 0; i < 5; i++)
    turns.push({ toolCalls: [{ name: "search_files", input: { path: "src", regex: `m${i}_1\\d\\(` } }] });
  turns.push({
    toolCalls: [{ name: "attempt_completion", input: { result: "renamed the tenth function of every module" } }],
  });
  return turns;
}

interface Run {
  requests: number;
  refused: number;
  promptTokens: number;
  largest: number;
  completed: boolean;
  modelTurns: number;
}

async function runTask(window: number): Promise<Run> {
  const workspace = path.join(base, `ws-${window}`);
  fs.mkdirSync(path.join(workspace, "src"), { recursive: true });
  for (let i = 0; i < FILES; i++)
    fs.writeFileSync(path.join(workspace, `src/module${i}.ts`), sourceFile(FILE_BYTES, `m${i}`));
  execFileSync("git", ["init", "-q"], { cwd: workspace });
  const turns = script();
  const server = await spawnModelServer({
    contextWindow: window,
    turns,
    responders: [
      {
        systemIncludes: "faithful, compact summaries",
        turn: { text: "Summary: the modules were read and their tenth functions are being renamed." },
      },
    ],
  });
  const sidecar = await spawnSidecar({ binary, env });
  const clients = createDlineClients(sidecar.handshake.url, sidecar.handshake.token);
  await clients.settings.upsertProfile({
    profile: {
      id: "bench",
      name: "bench",
      provider: "anthropic",
      baseUrl: server.url,
      model: "claude-sonnet-4-5",
      contextWindow: BigInt(window),
    },
  });
  await clients.settings.updateSettings({
    scope: SettingsScope.GLOBAL,
    patch: { autoApprovalSettings: { enabled: true, maxRequests: 1000, readFiles: true, editFiles: true } },
  });
  const { taskId } = await clients.tasks.newTask({
    workspaceRoot: workspace,
    text: "Rename the tenth function of every module.",
    profileId: "bench",
  });
  let status = TaskStatus.RUNNING;
  for await (const res of clients.tasks.subscribe({ taskId, afterSeq: 0n })) {
    const e = res.event!.event;
    if (e.case === "statusChanged" && e.value.status !== TaskStatus.RUNNING && e.value.status !== TaskStatus.WAITING) {
      status = e.value.status;
      break;
    }
  }
  const requests = await server.requests();
  await sidecar.stop();
  await server.stop();
  const answered = requests.filter((r) => r.status === 200);
  return {
    requests: requests.length,
    refused: requests.filter((r) => r.status === 400).length,
    promptTokens: requests.reduce((sum, r) => sum + r.promptTokens, 0),
    largest: Math.max(...answered.map((r) => r.promptTokens), 0),
    completed: status === TaskStatus.COMPLETED,
    modelTurns: answered.filter((r) => !JSON.stringify(r.body.system ?? "").includes("faithful, compact summaries"))
      .length,
  };
}

/** Without context management: each request holds every read whole; the first one past the window ends the task. */
function naive(window: number, systemTokens: number): { requests: number; promptTokens: number; answered: number } {
  const reads = script().map((t) => {
    const call = t.toolCalls?.[0];
    if (call?.name !== "read_file") return 40;
    const i = Number(/module(\d+)/.exec(String(call.input?.path))?.[1]);
    return countTextTokens(sourceFile(FILE_BYTES, `m${i}`));
  });
  let prompt = systemTokens;
  let total = 0;
  for (const [i, read] of reads.entries()) {
    total += prompt;
    if (prompt + 8192 > window) return { requests: i + 1, promptTokens: total, answered: i };
    prompt += read + 60;
  }
  return { requests: reads.length, promptTokens: total, answered: reads.length };
}

for (const window of [200_000, 128_000]) {
  const run = await runTask(window);
  const before = naive(window, 3500);
  const k = (n: number) => `${(n / 1000).toFixed(0)}k`;
  report(
    `${k(window)} window: outcome`,
    run.completed ? `completed, ${run.modelTurns} turns` : "not completed",
    `fails at request ${before.requests}`,
    "-",
    "completes all 40 turns",
  );
  report(
    `${k(window)} window: requests (summaries, retries)`,
    `${run.requests}`,
    `${before.answered} answered`,
    "-",
    "<= 45",
  );
  report(`${k(window)} window: requests over the window`, `${run.refused}`, "1", "-", "<= 1");
  report(
    `${k(window)} window: prompt tokens sent, whole task`,
    k(run.promptTokens),
    `${k(before.promptTokens)} in ${before.requests}`,
    "-",
    "(info)",
  );
  report(
    `${k(window)} window: largest request`,
    k(run.largest),
    k(window),
    `${(run.largest / window).toFixed(2)}x window`,
    "< 1x window",
  );
}
fs.rmSync(base, { recursive: true, force: true });
