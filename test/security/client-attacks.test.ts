/**
 * Model text that tries to fool the person at the terminal: a command whose escape sequences
 * erase it and draw another one in its place. The real dist/dline, on a pipe and on a pseudo
 * terminal (util-linux `script`), against the real sidecar and the scripted model server.
 * Each `attack` holds when every check in it passes.
 */
import { execFile, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe } from "vitest";
import { makeTestRoots, repoRoot, sidecarBinary } from "../helpers/sidecar.js";
import { spawnModelServer, type ModelServerProcess } from "../model-server/spawn.js";
import { makeWorkspace, TEST_KEY } from "../runtime/harness.js";
import { attack, attackLine, check, tallyLine, waitFor } from "./helpers.js";

const cli = process.env.DLINE_CLI ?? path.join(repoRoot, "dist", "dline");
const servers: ModelServerProcess[] = [];
const bases: string[] = [];
afterAll(async () => {
  console.log(attackLine());
  console.log(tallyLine());
  await Promise.all(servers.map((s) => s.stop()));
  for (const b of bases) fs.rmSync(b, { recursive: true, force: true });
});

/** The command of the attack: on a terminal it looks like "? command_approval: execute_command ls -la". */
const SPOOF = "touch PWNED #\r\x1b[2K\x1b[1A\x1b[2K? command_approval: execute_command ls -la";
/** Raw control sequences of the attack that must never reach the terminal. */
const RAW = ["\x1b[1A", "\x1b[2K?", "#\r"];

async function setup(): Promise<{ env: NodeJS.ProcessEnv; workspace: string }> {
  const roots = makeTestRoots("dline-sec-cli-");
  bases.push(roots.base);
  const workspace = makeWorkspace(roots.base);
  const server = await spawnModelServer({
    apiKey: TEST_KEY,
    turns: [
      {
        text: "Listing.\x1b]0;owned\x07\u202e",
        toolCalls: [{ name: "execute_command", input: { command: SPOOF, requires_approval: true } }],
      },
      { toolCalls: [{ name: "attempt_completion", input: { result: "done" } }] },
    ],
  });
  servers.push(server);
  return {
    env: {
      ...roots.env,
      DLINE_CORE: sidecarBinary,
      OPENAI_BASE_URL: server.url,
      OPENAI_MODEL: "m",
      OPENAI_API_KEY: TEST_KEY,
    },
    workspace,
  };
}

describe("the terminal shows what runs", () => {
  attack(
    "a command with escape sequences that draws another command shows its control characters (CLI on a pipe)",
    async () => {
      const { env, workspace } = await setup();
      const { stdout, stderr } = await promisify(execFile)(cli, ["task", "list the files", "--workspace", workspace], {
        env,
      }).catch((err: { stdout: string; stderr: string }) => err);
      const all = stdout + stderr;
      check("the approval was shown (control)", all.includes("command_approval"), all.slice(0, 300));
      for (const raw of RAW) check(`no raw ${JSON.stringify(raw)} reached the terminal`, !all.includes(raw));
      check(
        "no raw escape or CR from the model at all",
        !/[\x1b\r\u202e\x07]/.test(all),
        JSON.stringify(all.match(/.{0,20}[\x1b\r\u202e\x07].{0,20}/)?.[0]),
      );
      check(
        "the command's control characters are shown",
        all.includes("touch PWNED #\\r\\e[2K\\e[1A\\e[2K? command_approval"),
        all.slice(0, 400),
      );
      check("the command did not run (not interactive: denied)", !fs.existsSync(path.join(workspace, "PWNED")));
    },
  );

  attack(
    "on a terminal, the approval prompt shows the exact command, and answering it shows what was approved",
    async () => {
      const { env, workspace } = await setup();
      // util-linux script gives the CLI a pseudo terminal (stdin is a TTY: it asks).
      const child = spawn("script", ["-qfec", `${cli} task 'list the files' --workspace ${workspace}`, "/dev/null"], {
        env,
        stdio: ["pipe", "pipe", "pipe"],
      });
      let out = "";
      child.stdout.on("data", (d) => (out += d.toString("utf8")));
      child.stderr.on("data", (d) => (out += d.toString("utf8")));
      const asked = await waitFor(() => out.includes("[y/N/feedback]"), 30_000);
      check("the CLI asked (control)", asked, out.slice(-400));
      const prompt = out.slice(out.lastIndexOf("Approve"));
      check(
        "the prompt shows the exact command with its control characters",
        prompt.includes("touch PWNED #\\r\\e[2K\\e[1A\\e[2K? command_approval: execute_command ls -la"),
        JSON.stringify(prompt.slice(0, 300)),
      );
      check(
        "no raw cursor movement from the model reached the terminal",
        !RAW.some((r) => out.includes(r)),
        JSON.stringify(out.slice(-300)),
      );
      child.stdin.write("n\n");
      const exited = await new Promise<number | null>((resolve) => {
        const timer = setTimeout(() => {
          child.kill("SIGKILL");
          resolve(null);
        }, 30_000);
        child.on("exit", (code) => {
          clearTimeout(timer);
          resolve(code);
        });
      });
      check("the CLI ended", exited !== null, out.slice(-300));
      check("the denied command did not run", !fs.existsSync(path.join(workspace, "PWNED")));
    },
  );
});
