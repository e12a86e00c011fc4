import { execFile } from "node:child_process";
import * as fs from "node:fs";
import type { DlineClients } from "../../../../core/src/client/index.js";

export interface DoctorReport {
  cliVersion: string;
  core: string;
  serverVersion: string;
  protocolVersion: number;
  /** What `dline-core --version` prints, e.g. `dline-core 0.1.0 (protocol 1, node v24.22.3)`. */
  coreVersionLine: string;
  /** The Node the sidecar runs on (`v24.22.3`), from that line; empty if it does not say. */
  nodeVersion: string;
  pid: number;
  dataRoot: string;
  homeRoot: string;
  documentsRoot: string;
  logFile: string;
  gitVersion: string;
  /** Each problem a user should fix, as a sentence. Empty when all is well. */
  missing: string[];
}

function commandExists(command: string): Promise<boolean> {
  return new Promise((resolve) => execFile(command, ["--version"], (err) => resolve(!err)));
}

/** The first line `<core> --version` prints, or "" if it fails. */
function coreVersion(core: string): Promise<string> {
  return new Promise((resolve) =>
    execFile(core, ["--version"], (err, stdout) => resolve(err ? "" : String(stdout).split("\n")[0]!.trim())),
  );
}

/** Asks a running sidecar for its versions and roots and lists what is missing. */
export async function runDoctor(clients: DlineClients, core: string, cliVersion: string): Promise<DoctorReport> {
  const [health, coreVersionLine] = await Promise.all([clients.system.health({}), coreVersion(core)]);
  const init = await clients.system.initialize({
    clientName: "dline-cli",
    clientVersion: cliVersion,
    workspaceRoots: [process.cwd()],
  });
  const missing: string[] = [];
  if (!init.gitVersion)
    missing.push("git is not installed: checkpoints need it (Git must be installed to use checkpoints).");
  if (health.status !== "ok") missing.push(`the sidecar reports "${health.status}".`);
  if (!coreVersionLine) missing.push(`${core} --version failed.`);
  for (const [name, dir] of [
    ["data root", init.dataRoot],
    ["documents root", init.documentsRoot],
  ] as const) {
    if (fs.existsSync(dir)) {
      try {
        fs.accessSync(dir, fs.constants.W_OK);
      } catch {
        missing.push(`the ${name} ${dir} is not writable.`);
      }
    }
  }
  if (process.platform === "linux" && !process.env.DLINE_DOCS_DIR && !(await commandExists("xdg-user-dir"))) {
    missing.push("xdg-user-dir is not installed: the documents root falls back to ~/Documents/dline.");
  }
  return {
    cliVersion,
    core,
    serverVersion: init.serverVersion,
    protocolVersion: init.protocolVersion,
    coreVersionLine,
    nodeVersion: /\bnode (v\d+\.\d+\.\d+)/.exec(coreVersionLine)?.[1] ?? "",
    pid: init.pid,
    dataRoot: init.dataRoot,
    homeRoot: init.homeRoot,
    documentsRoot: init.documentsRoot,
    logFile: init.logFile,
    gitVersion: init.gitVersion,
    missing,
  };
}

export function formatDoctor(r: DoctorReport): string {
  const lines = [
    `dline CLI        ${r.cliVersion}`,
    `dline-core       ${r.serverVersion} (protocol ${r.protocolVersion}, node ${r.nodeVersion || "unknown"}, pid ${r.pid})`,
    `sidecar binary   ${r.core}`,
    `git              ${r.gitVersion || "missing"}`,
    `data root        ${r.dataRoot}`,
    `resource home    ${r.homeRoot}`,
    `documents root   ${r.documentsRoot}`,
    `log file         ${r.logFile}`,
  ];
  lines.push(r.missing.length ? "missing:" : "nothing missing");
  for (const m of r.missing) lines.push(`  - ${m}`);
  return lines.join("\n") + "\n";
}
