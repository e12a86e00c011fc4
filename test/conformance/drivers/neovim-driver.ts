/**
 * The Lua driver: a headless Neovim running nvim-driver.lua, which plays the scenario through
 * the plugin's commands (:Dline new, vim.ui.select approvals, :Dline compare, :Dline restore,
 * :Dline edit, :Dline history) against its own sidecar.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { repoRoot, sidecarBinary } from "../../helpers/sidecar.js";
import { MODEL, scenario, TEST_KEY } from "../scenario.js";
import type { ComparedFile, Driver, DriverContext, DriverResult } from "./driver.js";

const nvim = process.env.DLINE_NVIM ?? "nvim";
const init = path.join(repoRoot, "adapters", "neovim", "tests", "minimal_init.lua");
const script = path.join(repoRoot, "test", "conformance", "nvim-driver.lua");

function runNeovim(ctx: DriverContext, phase: string, extra: Record<string, string>): Promise<Record<string, unknown>> {
  const out = path.join(ctx.roots.base, `nvim-${phase}.json`);
  const scenarioFile = path.join(ctx.roots.base, "scenario.json");
  fs.writeFileSync(scenarioFile, JSON.stringify({ ...scenario, model: MODEL, testKey: TEST_KEY }));
  const xdg = (name: string) => {
    const dir = path.join(ctx.roots.base, `xdg-${name}`);
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  };
  return new Promise((resolve, reject) => {
    const child = spawn(nvim, ["--headless", "--clean", "-u", init, "-c", `luafile ${script}`], {
      cwd: ctx.workspace,
      env: {
        ...ctx.roots.env,
        XDG_CONFIG_HOME: xdg("config"),
        XDG_DATA_HOME: xdg("data"),
        XDG_STATE_HOME: xdg("state"),
        XDG_CACHE_HOME: xdg("cache"),
        DLINE_CORE: sidecarBinary,
        DLINE_TEST_BASE: ctx.roots.base,
        DLINE_CONFORMANCE_PHASE: phase,
        DLINE_CONFORMANCE_SCENARIO: scenarioFile,
        DLINE_CONFORMANCE_MODEL_URL: ctx.modelUrl,
        DLINE_CONFORMANCE_OUT: out,
        ...extra,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (output += d.toString("utf8")));
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0 || !fs.existsSync(out))
        return reject(new Error(`the Neovim driver (${phase}) failed with exit ${code}:\n${output}`));
      resolve(JSON.parse(fs.readFileSync(out, "utf8")) as Record<string, unknown>);
    });
  });
}

export const neovimDriver: Driver = {
  name: "neovim",
  async play(ctx): Promise<DriverResult> {
    const result = await runNeovim(ctx, "play", {});
    return { taskId: result.taskId as string, compare: result.compare as ComparedFile[] };
  },
  async deleteTask(ctx, taskId) {
    await runNeovim(ctx, "delete", { DLINE_CONFORMANCE_TASK: taskId });
  },
};
