import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as esbuild from "esbuild";
import { silentLogger } from "../../core/src/logging/logger.js";
import { InstanceLayout } from "../../core/src/storage/instance-layout.js";
import { SqliteFactory } from "../../core/src/storage/sqlite.js";
import { openTaskStorage, type TaskStorage } from "../../core/src/tasks/task-storage.js";
import { makeTestRoots, repoRoot, type TestRoots } from "../helpers/sidecar.js";

export interface TaskEnv {
  roots: TestRoots;
  layout: InstanceLayout;
  sqlite: SqliteFactory;
  logger: ReturnType<typeof silentLogger>;
}

/** Isolated roots and the real SQLite factory (node_modules' better-sqlite3). */
export function taskEnv(roots = makeTestRoots("dline-tasks-")): TaskEnv {
  const layout = new InstanceLayout({
    dataRoot: path.join(roots.dlineDir, "data"),
    homeRoot: roots.homeDir,
    documentsRoot: roots.docsDir,
  });
  return { roots, layout, sqlite: new SqliteFactory(() => undefined), logger: silentLogger() };
}

export async function openStorage(env: TaskEnv): Promise<TaskStorage> {
  return openTaskStorage({ layout: env.layout, sqlite: env.sqlite, logger: env.logger });
}

const builtChildren = new Map<string, string>();

/**
 * Bundles test/tasks/children/<name>.ts (our real store modules) into a CommonJS file that a
 * separate node process runs; native packages stay external and resolve through NODE_PATH.
 */
export async function buildChild(name: string): Promise<string> {
  const cached = builtChildren.get(name);
  if (cached) return cached;
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "dline-child-"));
  process.once("exit", () => fs.rmSync(outDir, { recursive: true, force: true }));
  const outfile = path.join(outDir, `${name}.cjs`);
  await esbuild.build({
    entryPoints: [path.join(repoRoot, "test/tasks/children", `${name}.ts`)],
    outfile,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["better-sqlite3", "proper-lockfile"],
    logLevel: "warning",
  });
  builtChildren.set(name, outfile);
  return outfile;
}

export function runChild(file: string, args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawn(process.execPath, [file, ...args], {
    env: { ...process.env, ...env, NODE_PATH: path.join(repoRoot, "node_modules") },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Collects a child's stdout lines; resolves `waitFor` once a predicate over the lines holds. */
export function lineCollector(child: ChildProcess) {
  const lines: string[] = [];
  let buffer = "";
  const waiters: { pred: (l: string[]) => boolean; resolve: () => void }[] = [];
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    const parts = buffer.split("\n");
    buffer = parts.pop()!;
    lines.push(...parts.filter(Boolean));
    for (const w of [...waiters])
      if (w.pred(lines)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
  });
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()));
  return {
    lines,
    stderr: () => stderr,
    waitFor(pred: (l: string[]) => boolean, timeoutMs = 30_000): Promise<void> {
      if (pred(lines)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const t = setTimeout(
          () => reject(new Error(`child did not reach the expected state; stderr: ${stderr.slice(-500)}`)),
          timeoutMs,
        );
        waiters.push({ pred, resolve: () => (clearTimeout(t), resolve()) });
      });
    },
  };
}

export function exited(child: ChildProcess): Promise<number | string | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode ?? child.signalCode);
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve(code ?? signal)));
}

/** A pid that certainly belongs to no running process: a child that has exited. */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", "0"]);
  const pid = child.pid!;
  await exited(child);
  return pid;
}
