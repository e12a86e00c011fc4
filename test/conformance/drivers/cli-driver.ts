/**
 * The TypeScript driver: the `dline` CLI (dist/dline) for the task, checkpoints, compare,
 * restore and delete; the TS client kit for Edit message (the CLI has no command for it).
 * Each CLI command starts and stops its own sidecar, as a user's shell would.
 */
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { EditMessageMode } from "../../../core/src/gen/dline/v1/checkpoint_pb.js";
import { MessageRole } from "../../../core/src/gen/dline/v1/task_pb.js";
import { repoRoot, sidecarBinary, startSidecar } from "../../helpers/sidecar.js";
import { MODEL, scenario, TEST_KEY } from "../scenario.js";
import { statusName, type Driver, type DriverContext } from "./driver.js";

const run = promisify(execFile);
export const cliBinary = path.join(repoRoot, "dist", "dline");

async function dline(ctx: DriverContext, args: string[]): Promise<string> {
  const env = {
    ...ctx.roots.env,
    DLINE_CORE: sidecarBinary,
    OPENAI_BASE_URL: ctx.modelUrl,
    OPENAI_MODEL: MODEL,
    OPENAI_API_KEY: TEST_KEY,
  };
  try {
    const { stdout } = await run(process.execPath, [cliBinary, ...args], {
      cwd: ctx.workspace,
      env,
      timeout: 120_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `dline ${args.join(" ")} failed: ${e.message}\n${e.stderr ?? ""}\n${(e.stdout ?? "").slice(-2000)}`,
      { cause: err },
    );
  }
}

export const cliDriver: Driver = {
  name: "cli",
  async play(ctx) {
    if (!fs.existsSync(cliBinary)) throw new Error(`${cliBinary} does not exist: run "npm run build" first.`);
    const events = (await dline(ctx, ["task", scenario.prompt, "--workspace", ctx.workspace, "--yes", "--json"]))
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { taskId?: string });
    const taskId = events.find((e) => e.taskId)?.taskId;
    if (!taskId) throw new Error("dline task printed no event with a task id");

    const { checkpoints } = JSON.parse(await dline(ctx, ["checkpoints", taskId, "--json"])) as {
      checkpoints: { id: string; kind?: string }[];
    };
    const baseline = checkpoints.find((c) => c.kind === "CHECKPOINT_KIND_BASELINE");
    if (!baseline) throw new Error(`no baseline checkpoint: ${JSON.stringify(checkpoints)}`);
    const { files } = JSON.parse(await dline(ctx, ["compare", taskId, baseline.id, "--json"])) as {
      files: { path: string; status?: string }[];
    };
    const compare = files
      .map((f) => ({ path: f.path, status: statusName(f.status ?? "") }))
      .sort((a, b) => a.path.localeCompare(b.path));
    await dline(ctx, ["restore", taskId, baseline.id, "--mode", "files", "--json"]);

    // Edit the last message sent (the follow-up answer) with Restore All, through the TS client.
    const sidecar = await startSidecar({
      roots: ctx.roots,
      cwd: ctx.workspace,
      env: { OPENAI_BASE_URL: ctx.modelUrl, OPENAI_MODEL: MODEL, OPENAI_API_KEY: TEST_KEY },
    });
    try {
      const task = await sidecar.clients.tasks.getTask({ taskId });
      const mine = task.messages.filter((m) => m.role === MessageRole.USER && m.kind === "text" && m.text !== "");
      const last = mine[mine.length - 1];
      if (!last) throw new Error("no user message to edit");
      await sidecar.clients.checkpoints.editMessage({
        taskId,
        messageId: last.id,
        text: scenario.editedAnswer,
        mode: EditMessageMode.RESTORE_ALL,
      });
    } finally {
      await sidecar.stop();
    }
    return { taskId, compare };
  },
  async deleteTask(ctx, taskId) {
    await dline(ctx, ["delete", taskId, "--json"]);
  },
};
