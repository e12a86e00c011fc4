import { execFile, spawn } from "node:child_process";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeTestRoots, repoRoot } from "../helpers/sidecar.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { captured } from "../helpers/items.js";
import { cliEnv } from "../helpers/cli-child.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");
const servers: ModelServerProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

/** The keys of protobuf-es's own message objects (`$typeName`, `$unknown`) anywhere in a value. */
function internalKeys(value: unknown, at = "$"): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => internalKeys(v, `${at}[${i}]`));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) => [
    ...(k.startsWith("$") ? [`${at}.${k}`] : []),
    ...internalKeys(v, `${at}.${k}`),
  ]);
}

describe("--json output is plain data", () => {
  it("every --json command prints JSON without protobuf-es's $typeName keys, nested ones included (restore's keptPaths, profiles)", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base, {
      ".gitignore": ".env\n",
      ".env": "SECRET=original\n",
      "src/app.js": "console.log('app');\n",
    });
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        { toolCalls: [{ name: "write_to_file", input: { path: "src/app.js", content: "console.log('edited');\n" } }] },
        {
          toolCalls: [
            {
              name: "execute_command",
              input: { command: "printf 'SECRET=from-command\\n' > .env", requires_approval: false },
            },
          ],
        },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ],
    });
    servers.push(server);
    const env = cliEnv(roots, server);
    const outputs: [string, unknown][] = [];
    const dline = async (args: string[]) => {
      const { stdout } = await run(cli, ["--json", ...args], { env, cwd: workspace });
      const value: unknown = JSON.parse(stdout);
      outputs.push([args.join(" "), value]);
      expect(internalKeys(value), args.join(" ")).toEqual([]);
      return value as Record<string, unknown>;
    };

    const task = await run(cli, ["--json", "task", "edit and run", "--workspace", workspace, "--yes"], { env });
    const taskId = captured(/"taskId":"([^"]+)"/.exec(task.stdout), "a task id in the events");
    task.stdout
      .trim()
      .split("\n")
      .forEach((line, i) => outputs.push([`task event ${i}`, JSON.parse(line)]));

    await dline(["history"]);
    await dline(["show", taskId]);
    const { checkpoints } = (await dline(["checkpoints", taskId])) as { checkpoints: { id: string; kind: string }[] };
    const baseline = checkpoints.find((c) => c.kind === "CHECKPOINT_KIND_BASELINE")!.id;
    await dline(["compare", taskId, baseline]);
    // The command changed the ignored .env: the restore names it among the files it kept (nested messages).
    const restored = await dline(["restore", taskId, baseline, "--mode", "files"]);
    expect(restored).toMatchObject({
      filesRestored: true,
      restoredPaths: ["src/app.js"],
      deletedPaths: [],
      keptPaths: [{ path: ".env", reason: "KEPT_REASON_NOT_TRACKED" }],
      conversationRestored: false,
    });
    await dline(["restore", taskId, baseline, "--mode", "task"]);
    await dline(["restore", taskId, baseline, "--mode", "files-and-task"]);
    await dline(["settings", "get"]);
    await dline(["settings", "get", "commandTimeoutSeconds"]);
    await dline(["settings", "set", "commandTimeoutSeconds", "90"]);
    const added = await dline([
      "profile",
      "add",
      "work",
      "--provider",
      "openai",
      "--model",
      "m",
      "--api-key-env",
      "OPENAI_API_KEY",
    ]);
    expect(added).toMatchObject({ profile: { id: "work", provider: "openai", model: "m" }, apiKeySet: true });
    const { profiles } = (await dline(["profile", "list"])) as { profiles: { id: string }[] };
    expect(profiles.map((p) => p.id)).toContain("work");
    await dline(["capabilities"]);
    await dline(["capabilities", "disable", "rules", "style.md", "--scope", "global"]);
    await dline(["capabilities", "trust"]);
    await dline(["import-cline"]);
    await dline(["import-cline", "--dry-run", "--all"]);
    await dline(["doctor"]);
    await dline(["version"]);
    await dline(["delete", taskId]);

    expect(outputs.flatMap(([command, value]) => internalKeys(value).map((k) => `${command}: ${k}`))).toEqual([]);
  });
});

describe("--json errors", () => {
  // Found using it: with --json, a failure was a plain "dline: not_found: ..." line, which a
  // script reading JSON could not parse.
  it("are one JSON line on stderr with the Connect code and the message; stdout stays empty", async () => {
    const roots = makeTestRoots();
    const env = cliEnv(roots, { url: "http://127.0.0.1:9" });
    const fail = (args: string[]) =>
      run(cli, args, { env }).then(
        () => {
          throw new Error(`dline ${args.join(" ")} succeeded`);
        },
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
    const missing = await fail(["--json", "show", "no-such-task"]);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toBe(
      `${JSON.stringify({ error: { code: "not_found", message: "Task no-such-task does not exist." } })}\n`,
    );
    const usage = await fail(["--json", "bogus"]);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.stderr)).toEqual({
      error: { code: "invalid_argument", message: 'unknown command "bogus".' },
    });
    // Without --json, as before: words for a person, and the usage after a usage error.
    const plain = await fail(["show", "no-such-task"]);
    expect(plain.stderr).toBe("dline: not_found: Task no-such-task does not exist.\n");
  });
});

describe("--json output read slowly through a pipe", () => {
  // Found in a bug hunt: `dline --json checkpoints T | (sleep 1; wc -c)` got 65,536 bytes: the CLI
  // exited before stdout had drained into the pipe.
  it("is written out whole before the CLI exits", async () => {
    const roots = makeTestRoots();
    const workspace = makeWorkspace(roots.base, { "notes.md": "notes\n" });
    const big = `${"x".repeat(99)}\n`.repeat(3000); // 300 KB: the Compare answer carries it
    const server = await spawnModelServer({
      apiKey: TEST_KEY,
      turns: [
        { toolCalls: [{ name: "write_to_file", input: { path: "big.txt", content: big } }] },
        { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
      ],
    });
    servers.push(server);
    const env = cliEnv(roots, server);
    await run(cli, ["task", "write", "--workspace", workspace, "--yes"], { env });
    const taskId = (JSON.parse((await run(cli, ["--json", "history"], { env })).stdout) as { tasks: { id: string }[] })
      .tasks[0]!.id;
    const cps = (
      JSON.parse((await run(cli, ["--json", "checkpoints", taskId], { env })).stdout) as {
        checkpoints: { id: string; kind: string }[];
      }
    ).checkpoints;
    const baseline = cps.find((c) => c.kind.toLowerCase().includes("baseline"))!.id;

    const child = spawn(cli, ["--json", "compare", taskId, baseline], { env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.pause(); // a reader that reads only after a while
    await new Promise((r) => setTimeout(r, 1000));
    const chunks: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.stdout.resume();
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    const out = Buffer.concat(chunks).toString("utf8");
    expect(out.length).toBeGreaterThan(300_000);
    const files = (JSON.parse(out) as { files: { path: string; after: string }[] }).files;
    expect(files.find((f) => f.path === "big.txt")?.after).toBe(big);
  });
});
