// The save driver (fixtures/save-driver.ts) as a separate node process: two processes on one
// shadow repository, one killed or stopped while it saves or holds the repository lock.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as esbuild from "esbuild";
import type { Sandbox } from "./helpers.js";

let driver = "";

/** Bundles the driver (once per test file: call it in beforeAll). */
export async function buildDriver(): Promise<void> {
  driver = await bundleFixture("save-driver");
}

/** Bundles `fixtures/<name>.ts` into a script node runs; answers its path. */
export async function bundleFixture(name: string): Promise<string> {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "dline-cp-driver-"));
  const script = path.join(outDir, `${name}.mjs`);
  await esbuild.build({
    entryPoints: [path.join(import.meta.dirname, "fixtures", `${name}.ts`)],
    outfile: script,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    absWorkingDir: path.resolve(import.meta.dirname, "../.."),
    logLevel: "warning",
  });
  // Resolve the externals (proper-lockfile) from the repository's node_modules.
  fs.symlinkSync(path.resolve(import.meta.dirname, "../../node_modules"), path.join(outDir, "node_modules"));
  return script;
}

export function runDriver(
  sb: Sandbox,
  taskId: string,
  turns: number,
  files: string[],
  options: { holdLock?: boolean; lockStaleMs?: number } = {},
) {
  const child = spawn(
    process.execPath,
    [
      driver,
      JSON.stringify({ base: sb.base, home: sb.home, workspace: sb.workspace, taskId, turns, files, ...options }),
    ],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let out = "";
  let err = "";
  child.stdout.on("data", (b) => (out += b));
  child.stderr.on("data", (b) => (err += b));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string; err: string }>(
    (resolve) => child.on("close", (code, signal) => resolve({ code, signal, out, err })),
  );
  return { child, done, output: () => out };
}

/** Resolves once the driver printed "holding" (it holds the repository lock). */
export const holding = (run: ReturnType<typeof runDriver>) =>
  new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (run.output().includes("holding")) {
        clearInterval(timer);
        resolve();
      }
    }, 5);
    void run.done.then((r) => {
      clearInterval(timer);
      reject(new Error(`the holder ended: ${r.err}`));
    });
  });
