import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import {
  createDlineClients,
  spawnSidecar,
  type DlineClients,
  type SidecarProcess,
} from "../../core/src/client/index.js";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const sidecarBinary = process.env.DLINE_CORE ?? path.join(repoRoot, "dist", "dline-core");

/** Isolated roots for one test: DLINE_DIR, DLINE_HOME_DIR, DLINE_DOCS_DIR and HOME in a temp folder. */
export interface TestRoots {
  base: string;
  home: string;
  dlineDir: string;
  homeDir: string;
  docsDir: string;
  env: NodeJS.ProcessEnv;
}

export function makeTestRoots(prefix = "dline-test-"): TestRoots {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const home = path.join(base, "home");
  const dlineDir = path.join(base, "dline");
  const homeDir = path.join(base, "dline-home");
  const docsDir = path.join(base, "docs");
  fs.mkdirSync(home, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    DLINE_DIR: dlineDir,
    DLINE_HOME_DIR: homeDir,
    DLINE_DOCS_DIR: docsDir,
    TMPDIR: os.tmpdir(),
  };
  return { base, home, dlineDir, homeDir, docsDir, env };
}

export interface RunningSidecar {
  process: SidecarProcess;
  clients: DlineClients;
  roots: TestRoots;
  stderrFile: string;
  stop(): Promise<number | string>;
}

export function assertBinaryBuilt(): void {
  if (!fs.existsSync(sidecarBinary)) {
    throw new Error(`${sidecarBinary} does not exist: run "npm run build" first.`);
  }
}

export async function startSidecar(
  options: { roots?: TestRoots; args?: string[]; env?: NodeJS.ProcessEnv; cwd?: string; json?: boolean } = {},
): Promise<RunningSidecar> {
  assertBinaryBuilt();
  const roots = options.roots ?? makeTestRoots();
  const stderrFile = path.join(roots.base, `sidecar-${Date.now()}-${Math.random().toString(36).slice(2)}.stderr`);
  const proc = await spawnSidecar({
    binary: sidecarBinary,
    args: options.args,
    cwd: options.cwd ?? roots.base,
    env: { ...roots.env, ...options.env },
    stderr: stderrFile,
  });
  const clients = createDlineClients(proc.handshake.url, proc.handshake.token, { json: options.json });
  return { process: proc, clients, roots, stderrFile, stop: () => proc.stop() };
}
