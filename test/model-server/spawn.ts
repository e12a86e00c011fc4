/**
 * Starts the scripted model server as a separate process (for sidecar and CLI tests): bundles
 * cli.ts with esbuild, writes the script to a temp file, spawns node.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { ModelServerScript, RecordedRequest } from "./script.js";

export interface ModelServerProcess {
  url: string;
  child: ChildProcess;
  requests(): Promise<RecordedRequest[]>;
  stop(): Promise<void>;
}

let bundled: Promise<string> | undefined;

/**
 * Bundles cli.ts once into a temp folder named by the hash of the server's sources, so that
 * runs reuse it and nothing piles up; built to a temp name and renamed, so that parallel test
 * processes never see half a file.
 */
function bundleCli(): Promise<string> {
  bundled ??= (async () => {
    // Bundled benchmarks run from .bench/: fall back to the repository layout from the cwd.
    let dir = path.dirname(fileURLToPath(import.meta.url));
    if (!fs.existsSync(path.join(dir, "cli.ts"))) dir = path.resolve("test/model-server");
    const hash = createHash("sha256");
    for (const file of fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(".ts"))
      .sort())
      hash.update(file).update(fs.readFileSync(path.join(dir, file)));
    const shared = process.env.DLINE_TEST_RUN_TMP ?? os.tmpdir();
    const outfile = path.join(shared, `dline-model-server-${hash.digest("hex").slice(0, 16)}.mjs`);
    if (fs.existsSync(outfile)) return outfile;
    const temp = `${outfile}.${process.pid}.tmp.mjs`;
    await build({
      entryPoints: [path.join(dir, "cli.ts")],
      outfile: temp,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      logLevel: "warning",
    });
    fs.renameSync(temp, outfile);
    return outfile;
  })();
  return bundled;
}

export async function spawnModelServer(script: ModelServerScript): Promise<ModelServerProcess> {
  const cli = await bundleCli();
  const scriptDir = fs.mkdtempSync(path.join(os.tmpdir(), "dline-model-script-"));
  const scriptFile = path.join(scriptDir, "script.json");
  fs.writeFileSync(scriptFile, JSON.stringify(script));
  const child = spawn(process.execPath, [cli, scriptFile], { stdio: ["pipe", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = "";
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const newline = buffered.indexOf("\n");
      if (newline === -1) return;
      child.stdout.off("data", onData);
      try {
        resolve((JSON.parse(buffered.slice(0, newline)) as { url: string }).url);
      } catch (err) {
        reject(err);
      }
    };
    child.stdout.on("data", onData);
    child.once("exit", (code) => reject(new Error(`model server exited early with code ${code}`)));
  });
  return {
    url,
    child,
    requests: async () => (await (await fetch(`${url}/__requests`)).json()) as RecordedRequest[],
    stop: () =>
      new Promise<void>((resolve) => {
        const done = () => {
          fs.rmSync(scriptDir, { recursive: true, force: true });
          resolve();
        };
        if (child.exitCode !== null) return done();
        child.once("exit", done);
        child.stdin.end();
      }),
  };
}
