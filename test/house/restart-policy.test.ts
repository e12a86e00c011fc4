/**
 * One restart policy for every client (docs/clients.md, "One restart policy"): 5 restarts within
 * 3 minutes, the first after 250 ms, each next one doubled, never more than 8 s apart. Each
 * client's default policy is asked for the delays after six deaths in a row, in its own
 * language where it is cheap: the VS Code policy object in-process, the Neovim one in a headless
 * Neovim; the Kotlin data class's defaults are read from its source (a JVM start per check would
 * cost more than the rule is worth; RestartPolicyTest covers its behaviour in the Maven suite).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_RESTART_POLICY, RestartPolicy } from "../../adapters/vscode/src/sidecar/restart-policy.js";

const root = path.resolve(import.meta.dirname, "../..");
/** Delays before the five restarts the policy allows; the sixth death gives up (null). */
const EXPECTED = [250, 500, 1000, 2000, 4000, null];

describe("the clients' restart policy", () => {
  it("is the documented one in docs/clients.md", () => {
    const doc = fs.readFileSync(path.join(root, "docs", "clients.md"), "utf8");
    expect(doc).toContain("**5** within a window of **3 minutes**");
    expect(doc).toContain("**250 ms**");
    expect(doc).toContain("**8 s**");
  });

  it("VS Code: five restarts 250 ms doubling, then it gives up; a run of 3 minutes forgets the failures", () => {
    expect(DEFAULT_RESTART_POLICY).toMatchObject({
      initialDelayMs: 250,
      maxDelayMs: 8_000,
      maxConsecutiveFailures: 5,
      healthyAfterMs: 180_000,
    });
    const policy = new RestartPolicy();
    const delays = EXPECTED.map(() => {
      const d = policy.onExit(1_000);
      return d.restart ? d.delayMs : null;
    });
    expect(delays).toEqual(EXPECTED);
    expect(policy.onExit(180_000)).toEqual({ restart: true, delayMs: 250, attempt: 1 });
  });

  it("Neovim: the default config's policy gives the same delays within its window", () => {
    const script = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "dline-restart-")), "policy.lua");
    fs.writeFileSync(
      script,
      [
        `vim.opt.runtimepath:prepend(${JSON.stringify(path.join(root, "adapters", "neovim"))})`,
        `local opts = require("dline.config").defaults().restart`,
        `local policy = require("dline.sidecar").restart_policy(opts)`,
        `local out = {}`,
        `for i = 1, 6 do local d = policy:next_delay(i * 1000); out[#out + 1] = d == nil and "null" or tostring(math.floor(d)) end`,
        `io.stdout:write(vim.json.encode({ window_ms = opts.window_ms, max_delay_ms = opts.max_delay_ms, delays = table.concat(out, ",") }))`,
      ].join("\n"),
    );
    const run = spawnSync(
      process.env.DLINE_NVIM ?? "nvim",
      ["--headless", "--clean", "-u", "NONE", "-c", `luafile ${script}`, "-c", "qa!"],
      {
        encoding: "utf8",
        timeout: 30_000,
        env: {
          ...process.env,
          XDG_CONFIG_HOME: path.dirname(script),
          XDG_DATA_HOME: path.dirname(script),
          XDG_STATE_HOME: path.dirname(script),
        },
      },
    );
    expect(run.error, "Neovim is required: scripts/setup-test.sh installs it").toBeUndefined();
    const result = JSON.parse(run.stdout) as { window_ms: number; max_delay_ms: number; delays: string };
    expect(result.window_ms).toBe(180_000);
    expect(result.max_delay_ms).toBe(8_000);
    expect(result.delays.split(",").map((d) => (d === "null" ? null : Number(d)))).toEqual(EXPECTED);
  });

  it("Kotlin: RestartPolicy's defaults are the same numbers", () => {
    const source = fs.readFileSync(
      path.join(root, "adapters/jetbrains/client/src/main/kotlin/dev/dline/client/RestartPolicy.kt"),
      "utf8",
    );
    const defaults = source.slice(
      source.indexOf("data class RestartPolicy("),
      source.indexOf(") {", source.indexOf("data class RestartPolicy(")),
    );
    expect(defaults).toMatch(/val maxRestarts: Int = 5,/);
    expect(defaults).toMatch(/val window: Duration = 3\.minutes,/);
    expect(defaults).toMatch(/val initialBackoff: Duration = 250\.milliseconds,/);
    expect(defaults).toMatch(/val maxBackoff: Duration = 8\.seconds,/);
  });
});
