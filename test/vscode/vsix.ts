/**
 * The VSIX the end-to-end suites install into code-server: made by the release script itself
 * (scripts/release.mjs --only vscode, this machine's platform), from the current build, once
 * per test process; installed with code-server's own --install-extension, as a person would.
 */
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { repoRoot } from "../helpers/sidecar.js";
import { CODE_SERVER, NODE24_BIN } from "./code-server.js";

let made: string | undefined;

export function testVsix(): string {
  if (made && fs.existsSync(made)) return made;
  const build = path.join(repoRoot, "dist", "build");
  // Folders of earlier runs whose process is gone (a worker that was killed never ran its exit handler).
  for (const name of fs.existsSync(build) ? fs.readdirSync(build) : []) {
    const pid = Number(/^e2e-vsix-(\d+)$/.exec(name)?.[1]);
    if (pid && !alive(pid)) fs.rmSync(path.join(build, name), { recursive: true, force: true });
  }
  const out = path.join(build, `e2e-vsix-${process.pid}`);
  const platform = `${process.platform}-${process.arch}`;
  const result = spawnSync(
    process.execPath,
    [path.join(repoRoot, "scripts", "release.mjs"), "--only", "vscode", "--platform", platform, "--out", out],
    { encoding: "utf8" },
  );
  if (result.status !== 0)
    throw new Error(`scripts/release.mjs could not make the VSIX:\n${result.stdout}${result.stderr}`);
  const vsix = fs.readdirSync(out).find((f) => f.endsWith(`-${platform}.vsix`));
  if (!vsix) throw new Error(`scripts/release.mjs made no ${platform} VSIX in ${out}`);
  made = path.join(out, vsix);
  process.once("exit", () => fs.rmSync(out, { recursive: true, force: true }));
  return made;
}

/** Installs the VSIX into the extensions folder code-server will use; returns the installed folder. */
export function installVsix(
  vsix: string,
  options: { extensionsDir: string; userDataDir: string; env: NodeJS.ProcessEnv },
): string {
  const output = execFileSync(
    path.join(NODE24_BIN, "node"),
    [
      CODE_SERVER,
      "--extensions-dir",
      options.extensionsDir,
      "--user-data-dir",
      options.userDataDir,
      "--install-extension",
      vsix,
    ],
    {
      encoding: "utf8",
      env: { ...options.env, PATH: `${NODE24_BIN}:${options.env.PATH ?? process.env.PATH}` },
      timeout: 120_000,
    },
  );
  if (!output.includes("was successfully installed"))
    throw new Error(`code-server did not install ${vsix}:\n${output}`);
  const installed = fs.readdirSync(options.extensionsDir).find((f) => f.startsWith("dline.dline-vscode-"));
  if (!installed) throw new Error(`no dline.dline-vscode-* folder in ${options.extensionsDir} after the install`);
  return path.join(options.extensionsDir, installed);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
