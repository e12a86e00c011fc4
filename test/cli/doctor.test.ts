import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { makeTestRoots, repoRoot, sidecarBinary } from "../helpers/sidecar.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");
const runtimePin = JSON.parse(fs.readFileSync(path.join(repoRoot, "scripts", "node-runtime.json"), "utf8")) as {
  version: string;
};

describe("dline doctor", () => {
  it("starts the sidecar and prints versions and roots as JSON", async () => {
    const roots = makeTestRoots();
    const { stdout } = await run(cli, ["--json", "doctor"], { env: { ...roots.env, DLINE_CORE: sidecarBinary } });
    const report = JSON.parse(stdout);
    expect(report.serverVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(report.protocolVersion).toBe(1);
    // The Node the sidecar embeds (scripts/node-runtime.json), not the one running the CLI.
    expect(report.nodeVersion).toBe(`v${runtimePin.version}`);
    expect(report.coreVersionLine).toBe(`dline-core ${report.serverVersion} (protocol 1, node v${runtimePin.version})`);
    expect(report.core).toBe(sidecarBinary);
    expect(report.dataRoot).toBe(path.join(roots.dlineDir, "data"));
    expect(report.homeRoot).toBe(roots.homeDir);
    expect(report.documentsRoot).toBe(roots.docsDir);
    expect(report.gitVersion).toMatch(/^\d+\.\d+/);
    expect(report.missing).toEqual([]);
  });

  it("prints the sidecar's Node version", async () => {
    const roots = makeTestRoots();
    const { stdout } = await run(cli, ["doctor"], { env: { ...roots.env, DLINE_CORE: sidecarBinary } });
    expect(stdout).toMatch(
      new RegExp(
        `^dline-core +\\S+ \\(protocol 1, node v${runtimePin.version.replace(/\./g, "\\.")}, pid \\d+\\)$`,
        "m",
      ),
    );
  });

  it("reports git as missing when it is not on PATH", async () => {
    const roots = makeTestRoots();
    const bin = path.join(roots.base, "bin");
    fs.mkdirSync(bin);
    fs.symlinkSync(process.execPath, path.join(bin, "node"));
    const err = await run(cli, ["doctor"], {
      env: { ...roots.env, PATH: bin, DLINE_CORE: sidecarBinary },
    }).catch((e: { code: number; stdout: string }) => e);
    expect((err as { code: number }).code).toBe(1);
    expect((err as { stdout: string }).stdout).toContain("git is not installed");
    expect((err as { stdout: string }).stdout).toMatch(/git\s+missing/);
  });

  it("explains how to build the sidecar when it cannot be found", async () => {
    const roots = makeTestRoots();
    const lonely = path.join(roots.base, "dline");
    fs.copyFileSync(cli, lonely);
    const err = await run(process.execPath, [lonely, "doctor"], { env: roots.env, cwd: roots.base }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((err as { code: number }).code).toBe(1);
    expect((err as { stderr: string }).stderr).toContain("Cannot find the dline-core sidecar");
    expect((err as { stderr: string }).stderr).toContain("npm run build");
  });
});

describe("dline settings and profile", () => {
  it("sets and resolves a setting, adds and lists a profile without printing its key", async () => {
    const roots = makeTestRoots();
    const env = { ...roots.env, DLINE_CORE: sidecarBinary, MY_KEY: "sk-cli-secret-123" };
    await run(cli, ["settings", "set", "commandTimeoutSeconds", "42"], { env });
    const got = JSON.parse((await run(cli, ["--json", "settings", "get", "commandTimeoutSeconds"], { env })).stdout);
    expect(got).toEqual({ key: "commandTimeoutSeconds", value: 42, source: "global" });
    const bad = await run(cli, ["settings", "set", "noSuchSetting", "1"], { env }).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((bad as { code: number }).code).toBe(1);
    expect((bad as { stderr: string }).stderr).toContain("invalid_argument");
    const added = await run(
      cli,
      [
        "profile",
        "add",
        "work",
        "--provider",
        "anthropic",
        "--model",
        "claude-x",
        "--api-key-env",
        "MY_KEY",
        "--default",
      ],
      { env },
    );
    expect(added.stdout).toContain("key from $MY_KEY");
    const listed = await run(cli, ["profile", "list"], { env });
    expect(listed.stdout).toContain("work  anthropic  claude-x");
    expect(listed.stdout).toContain("(key set)");
    expect(listed.stdout + added.stdout).not.toContain("sk-cli-secret-123");
    const def = JSON.parse((await run(cli, ["--json", "settings", "get", "defaultProfileId"], { env })).stdout);
    expect(def.value).toBe("work");
  });

  it("profile add takes cache prices, the output limit and the model's options; unpriced models say so", async () => {
    const roots = makeTestRoots();
    const env = { ...roots.env, DLINE_CORE: sidecarBinary };
    const flags = [
      "--input-price",
      "2",
      "--output-price",
      "8",
      "--cache-read-price",
      "0.2",
      "--cache-write-price",
      "2.5",
      "--max-output-tokens",
      "16000",
    ];
    const more = [
      "--first-byte-timeout",
      "300",
      "--reasoning-effort",
      "high",
      "--tool-format",
      "xml",
      "--context-window",
      "64000",
    ];
    await run(
      cli,
      [
        "profile",
        "add",
        "local",
        "--provider",
        "openai",
        "--base-url",
        "http://127.0.0.1:11434/v1",
        "--model",
        "qwen3:8b",
        ...flags,
        ...more,
      ],
      { env },
    );
    const thinking = await run(
      cli,
      [
        "profile",
        "add",
        "claude",
        "--provider",
        "anthropic",
        "--model",
        "claude-sonnet-4-5",
        "--thinking-budget",
        "4096",
      ],
      { env },
    );
    expect(thinking.stdout).toContain("prices: price table (claude-sonnet-4-5)");
    const unpriced = await run(
      cli,
      [
        "profile",
        "add",
        "llama",
        "--provider",
        "openai",
        "--base-url",
        "http://127.0.0.1:11434/v1",
        "--model",
        "llama3.1:8b",
      ],
      { env },
    );
    expect(unpriced.stdout).toContain("prices: unknown");
    const free = await run(
      cli,
      ["profile", "add", "free", "--provider", "openai", "--model", "llama3.1:8b", "--zero-cost"],
      { env },
    );
    expect(free.stdout).toContain("prices: zero cost");
    const { profiles } = JSON.parse((await run(cli, ["--json", "profile", "list"], { env })).stdout);
    expect(profiles.find((p: { id: string }) => p.id === "local")).toMatchObject({
      inputPricePerMtok: 2,
      outputPricePerMtok: 8,
      cacheReadPricePerMtok: 0.2,
      cacheWritePricePerMtok: 2.5,
      maxOutputTokens: "16000",
      firstByteTimeoutSeconds: 300,
      reasoningEffort: "high",
      toolCallFormat: "xml",
      contextWindow: "64000",
      priceSource: "profile",
    });
    expect(profiles.find((p: { id: string }) => p.id === "claude")).toMatchObject({ thinkingBudgetTokens: "4096" });
    const bad = await run(
      cli,
      ["profile", "add", "x", "--provider", "anthropic", "--model", "m", "--thinking-budget", "100"],
      { env },
    ).catch((e: { code: number; stderr: string }) => e);
    expect((bad as { stderr: string }).stderr).toContain("thinking_budget_tokens");
  });
});
