// End-to-end cost of checkpoints for a task, through the real CLI, sidecar binary and scripted
// model server, on a 27,000-file workspace shaped like babel (two files per folder): a later
// task in a workspace, checkpoints on vs off (the checkpointsEnabled setting), alternating,
// each a separate `dline task` process as a user runs it. Three tasks: three file edits then
// the completion (with answers at once, and with each answer's first byte 300 ms after its
// request, as a hosted model's); one command that changes three files then the completion, over
// at once or after a second (its save after the command). The first task of each side (the
// first baseline) is run untimed before.
// Prints figures; asserts nothing.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import { createDlineClients, spawnSidecar } from "../core/src/client/index.js";
import { TaskStatus } from "../core/src/gen/dline/v1/task_pb.js";
import type { ScriptTurn } from "../test/model-server/script.js";
import { spawnModelServer } from "../test/model-server/spawn.js";
import { fmtMs, median, ratio, report } from "./helpers.js";

const FILES = 27_000;
/** Alternating rounds: one task takes 0.5-0.8 s on a shared 2-core machine, and five rounds' median swung 1.07x-1.32x. */
const ROUNDS = 11;
const root = path.resolve(".");
const cli = path.join(root, "dist", "dline");
const core = path.join(root, "dist", "dline-core");

function makeTree(dir: string): void {
  for (let i = 0; i < FILES; i++) {
    const folder = path.join(dir, "packages", `p${Math.floor(i / 200)}`, `src${Math.floor(i / 2) % 100}`);
    if (i % 2 === 0) fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, `f${i}.js`), `export const v${i} = ${i};\n`.repeat(1 + (i % 5)));
  }
  fs.writeFileSync(path.join(dir, ".gitattributes"), "* text eol=lf\n");
  execFileSync("git", ["init", "-q"], { cwd: dir });
}

/** A fast hosted model's time to its first byte, for the row that has one. */
const MODEL_FIRST_BYTE_MS = 300;
const base = fs.mkdtempSync(path.join(os.tmpdir(), "dline-cp-task-bench-"));
const edits = ["packages/p0/src0/f0.js", "packages/p60/src0/f12000.js", "packages/p134/src99/f26999.js"];
const completion: ScriptTurn = { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] };
// Three turns of one edit each, then the completion; the script loops for every task.
const editTurns: ScriptTurn[] = [
  ...edits.map((p) => ({
    toolCalls: [
      { name: "write_to_file", input: { path: p, content: `// edited by the task\nexport const changed = "${p}";\n` } },
    ],
  })),
  completion,
];
/** One command that changes the three files (after `wait`), then the completion. */
function commandTurns(wait: string): ScriptTurn[] {
  const change = `for f in ${edits.join(" ")}; do echo "// changed by a command" >> $f; done`;
  return [
    {
      toolCalls: [{ name: "execute_command", input: { command: `${wait}${change}`, requires_approval: false } }],
    },
    completion,
  ];
}

interface Side {
  env: NodeJS.ProcessEnv;
  workspace: string;
  times: number[];
}

function sideFor(name: string, checkpoints: boolean, modelUrl: string): Side {
  const dir = path.join(base, name);
  const workspace = path.join(dir, "project");
  fs.mkdirSync(workspace, { recursive: true });
  makeTree(workspace);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: path.join(dir, "home"),
    DLINE_DIR: path.join(dir, "dline"),
    DLINE_HOME_DIR: path.join(dir, "dline-home"),
    DLINE_DOCS_DIR: path.join(dir, "docs"),
    DLINE_CORE: core,
    OPENAI_BASE_URL: modelUrl,
    OPENAI_MODEL: "scripted-model",
    OPENAI_API_KEY: "bench-key",
  };
  fs.mkdirSync(env.HOME!, { recursive: true });
  if (!checkpoints) execFileSync(cli, ["settings", "set", "checkpointsEnabled", "false"], { env, stdio: "ignore" });
  return { env, workspace, times: [] };
}

function runTask(side: Side): number {
  execFileSync("sync");
  const t = performance.now();
  execFileSync(cli, ["task", "edit three files", "--workspace", side.workspace, "--yes"], {
    env: side.env,
    stdio: "ignore",
  });
  return performance.now() - t;
}

/** Later tasks of this script, on vs off, alternating; the medians reported as one row (`goal`: none, a figure). */
async function measure(label: string, turns: ScriptTurn[], goal = "none (a figure)"): Promise<void> {
  const server = await spawnModelServer({ loop: true, turns });
  try {
    const on = sideFor(`${label}-on`, true, server.url);
    const off = sideFor(`${label}-off`, false, server.url);
    // The first task of each workspace (with checkpoints: the first baseline of the workspace).
    runTask(on);
    runTask(off);
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 === 0 ? [on, off] : [off, on]) side.times.push(runTask(side));
    }
    const ours = median(on.times);
    const without = median(off.times);
    report(label, fmtMs(ours), fmtMs(without), ratio(ours, without), goal);
  } finally {
    await server.stop();
  }
}

/** A person reads the result before the next task: an editor's sidecar watches the workspace meanwhile. */
const BETWEEN_TASKS_MS = 4000;
const ENDED = [TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED, TaskStatus.INTERRUPTED];

/**
 * Later tasks in an editor's sidecar: one process per side serves every task in turn (each
 * started over RPC as an editor does, its approvals answered), on vs off, alternating, with a
 * pause between tasks as a person's. Timed from the task's creation to its completion.
 */
async function measureInEditor(label: string, turns: ScriptTurn[]): Promise<void> {
  const server = await spawnModelServer({ loop: true, turns });
  const sidecars: { stop(): Promise<unknown> }[] = [];
  try {
    const sides: (Side & { clients: ReturnType<typeof createDlineClients> })[] = [];
    for (const [name, checkpoints] of [
      ["on", true],
      ["off", false],
    ] as const) {
      const side = sideFor(`${label}-${name}`, checkpoints, server.url);
      const sidecar = await spawnSidecar({ binary: core, env: side.env });
      sidecars.push(sidecar);
      const clients = createDlineClients(sidecar.handshake.url, sidecar.handshake.token);
      await clients.settings.upsertProfile({
        profile: {
          id: "bench",
          name: "bench",
          provider: "openai",
          baseUrl: server.url,
          model: "m",
          contextWindow: 1_000_000n,
        },
      });
      sides.push({ ...side, clients });
    }
    const run = async (side: (typeof sides)[number]): Promise<number> => {
      execFileSync("sync");
      const t = performance.now();
      const { taskId } = await side.clients.tasks.newTask({
        workspaceRoot: side.workspace,
        text: "edit",
        profileId: "bench",
      });
      for await (const res of side.clients.tasks.subscribe({ taskId, afterSeq: 0n })) {
        const e = res.event!.event;
        if (e.case === "ask")
          await side.clients.tasks.respond({ taskId, askId: e.value.askId, approve: true, text: "" });
        if (e.case === "statusChanged" && ENDED.includes(e.value.status)) {
          if (e.value.status !== TaskStatus.COMPLETED) throw new Error(`the task ended ${TaskStatus[e.value.status]}`);
          break;
        }
      }
      return performance.now() - t;
    };
    const pause = () => new Promise((resolve) => setTimeout(resolve, BETWEEN_TASKS_MS));
    // The first task of each side (with checkpoints: the workspace's first baseline).
    for (const side of sides) await run(side);
    await pause();
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of round % 2 === 0 ? sides : [...sides].reverse()) side.times.push(await run(side));
      await pause();
    }
    const [on, off] = sides as [(typeof sides)[number], (typeof sides)[number]];
    report(
      label,
      fmtMs(median(on.times)),
      fmtMs(median(off.times)),
      ratio(median(on.times), median(off.times)),
      "<= 1.15x",
    );
  } finally {
    await Promise.all(sidecars.map((s) => s.stop()));
    await server.stop();
  }
}

try {
  await measure("task of 3 edits, checkpoints on vs off (later task) @27k", editTurns, "<= 1.15x");
  // The same with each answer's first byte 300 ms after its request (hosted models take about
  // that long or longer): what a person waits for, where the baseline's scan runs while the
  // model thinks.
  await measure(
    "task of 3 edits, each answer's first byte after 300 ms, on vs off (later task) @27k",
    editTurns.map((turn) => ({ ...turn, firstByteDelayMs: MODEL_FIRST_BYTE_MS })),
  );
  await measureInEditor("task of 3 edits in an editor's sidecar, checkpoints on vs off (later task) @27k", editTurns);
  // Over at once: its save is a scan. Running a second: the workspace is watched and scanned
  // meanwhile, and its save stages what changed.
  await measure("task with one short command changing 3 files, on vs off (later task) @27k", commandTurns(""));
  await measure("task with one 1 s command changing 3 files, on vs off (later task) @27k", commandTurns("sleep 1; "));
  // Each file rewritten through a temporary file that goes (as sed -i does): one event of a path
  // that went per file, which made the watcher look through every watched folder each time.
  await measure("task with one command rewriting 3,000 files with sed -i, on vs off (later task) @27k", [
    {
      toolCalls: [
        {
          name: "execute_command",
          input: {
            command: "find packages -name '*.js' | head -n 3000 | xargs sed -i '$a // rewritten'",
            requires_approval: false,
          },
        },
      ],
    },
    completion,
  ]);
} finally {
  fs.rmSync(base, { recursive: true, force: true, maxRetries: 5 });
}
