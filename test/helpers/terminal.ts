/**
 * The CLI on a terminal, as a person runs it: `script` gives it a pseudo-terminal (so it asks
 * its questions), what it shows is collected as the screen, and keys are typed into it.
 */
import { spawn } from "node:child_process";
import * as path from "node:path";
import { repoRoot } from "./sidecar.js";

const cli = path.join(repoRoot, "dist", "dline");
const shellWords = (words: string[]) => words.map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(" ");

export interface CliTerminal {
  /** Everything shown so far (stdout and stderr, as the terminal mixes them). */
  screen(): string;
  /** Types `text` (end it with "\n" for Enter). */
  type(text: string): void;
  exited: Promise<number | null>;
  kill(): Promise<unknown>;
}

export function cliOnTerminal(env: NodeJS.ProcessEnv, args: string[]): CliTerminal {
  const child = spawn("script", ["-qfec", shellWords([cli, ...args]), "/dev/null"], {
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let screen = "";
  child.stdout.on("data", (d: Buffer) => (screen += d.toString("utf8")));
  child.stderr.on("data", (d: Buffer) => (screen += d.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    screen: () => screen,
    type: (text) => child.stdin.write(text),
    exited,
    kill: () => {
      child.kill("SIGKILL");
      return exited;
    },
  };
}
