import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { makeTestRoots, repoRoot } from "../helpers/sidecar.js";

const run = promisify(execFile);
const cli = path.join(repoRoot, "dist", "dline");

/** Every command `dline help` lists. */
const COMMANDS = [
  "task",
  "resume",
  "follow",
  "history",
  "show",
  "delete",
  "import-cline",
  "checkpoints",
  "compare",
  "restore",
  "settings",
  "profile",
  "capabilities",
  "doctor",
  "version",
];

/** Runs the CLI with a sidecar path that does not exist: help must not need one. */
async function dline(args: string[]) {
  const roots = makeTestRoots("dline-cli-help-");
  const env = { ...roots.env, DLINE_CORE: path.join(roots.base, "no-such-dline-core") };
  const result = await run(cli, args, { env }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => e,
  );
  // Nothing ran: no storage root was written.
  expect(fs.existsSync(roots.dlineDir) ? fs.readdirSync(roots.dlineDir) : []).toEqual([]);
  return result;
}

describe("dline COMMAND --help", () => {
  it("prints each command's own help (usage, arguments or options, examples), not the general help, and runs nothing", async () => {
    const general = (await dline(["help"])).stdout;
    expect(general).toMatch(/^Usage: dline \[--core PATH\] \[--json\] <command>/);
    for (const command of COMMANDS) {
      const { code, stdout, stderr } = await dline([command, "--help"]);
      expect({ command, code, stderr }).toEqual({ command, code: 0, stderr: "" });
      expect(stdout, command).not.toBe(general);
      // Its own usage line first, then examples of it.
      expect(stdout.split("\n")[0], command).toMatch(new RegExp(`^Usage: dline (\\[--json\\] )?${command}\\b`));
      expect(stdout, command).toMatch(new RegExp(`^Examples:\\n {2}(\\S+=\\S+ )*dline (--json )?${command}\\b`, "m"));
      // `dline help COMMAND` prints the same.
      expect((await dline(["help", command])).stdout, command).toBe(stdout);
    }
  });

  it("compare's and restore's help name their arguments, options and what the output means", async () => {
    const compare = (await dline(["compare", "TASK", "CP", "--help"])).stdout;
    expect(compare).toMatch(/^Usage: dline \[--json\] compare TASK_ID CHECKPOINT_ID$/m);
    expect(compare).toMatch(/^Arguments:\n {2}TASK_ID .*\n {2}CHECKPOINT_ID /m);
    expect(compare).toContain("not tracked");
    const restore = (await dline(["restore", "--help"])).stdout;
    expect(restore).toMatch(
      /^Usage: dline \[--json\] restore TASK_ID CHECKPOINT_ID \[--mode files-and-task\|files\|task\]$/m,
    );
    expect(restore).toMatch(/^ {2}--mode M +files-and-task \(default\)/m);
    expect(restore).toMatch(/^ {2}dline restore \S+ \S+ --mode files$/m);
  });

  it("an unknown command's --help is refused as an unknown command", async () => {
    const { code, stderr } = await dline(["frobnicate", "--help"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^dline: unknown command "frobnicate"\./);
  });
});
