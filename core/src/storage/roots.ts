import { execFile } from "node:child_process";
import * as os from "node:os";
import * as path from "node:path";

/** The three independent file roots of docs/storage.md. */
export interface StorageRoots {
  /** State/data root: `<DLINE_DIR>/data`, default `~/.dline/data`. */
  dataRoot: string;
  /** Resource home: `DLINE_HOME_DIR`, default `~/.dline`. */
  homeRoot: string;
  /** Documents root: `DLINE_DOCS_DIR` as is, default `<Documents>/dline`. */
  documentsRoot: string;
}

export type Env = Readonly<Record<string, string | undefined>>;

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

function homeDir(env: Env): string {
  return nonEmpty(env.HOME) ?? nonEmpty(env.USERPROFILE) ?? os.homedir();
}

export function getDlineDataDir(env: Env): string {
  const override = nonEmpty(env.DLINE_DIR);
  return override ? path.resolve(override, "data") : path.join(homeDir(env), ".dline", "data");
}

export function getDlineHomePath(env: Env): string {
  const override = nonEmpty(env.DLINE_HOME_DIR);
  return override ? path.resolve(override) : path.join(homeDir(env), ".dline");
}

function run(file: string, args: string[], env: Env): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(file, args, { env: { ...env }, timeout: 5000, windowsHide: true }, (err, stdout) => {
      resolve(err ? undefined : stdout.toString().trim() || undefined);
    });
  });
}

/**
 * The system Documents folder: PowerShell's MyDocuments on Windows, `xdg-user-dir DOCUMENTS`
 * on Linux, else `~/Documents`. xdg-user-dir answers `$HOME` when no Documents folder is
 * configured; that is not a Documents folder, so we fall back then too.
 */
export async function resolveSystemDocumentsDir(env: Env, platform = process.platform): Promise<string> {
  const home = homeDir(env);
  let found: string | undefined;
  if (platform === "win32") {
    found = await run(
      "powershell.exe",
      ["-NoProfile", "-NonInteractive", "-Command", "[Environment]::GetFolderPath('MyDocuments')"],
      env,
    );
  } else if (platform === "linux") {
    found = await run("xdg-user-dir", ["DOCUMENTS"], env);
  }
  if (found && path.resolve(found) !== path.resolve(home)) return found;
  return path.join(home, "Documents");
}

/**
 * Resolves the three roots once at start-up ("warm-up"), so that synchronous callers can read
 * them afterwards from the returned object. Construct one per process in main.ts.
 */
export async function resolveStorageRoots(env: Env): Promise<StorageRoots> {
  const docsOverride = nonEmpty(env.DLINE_DOCS_DIR);
  const documentsRoot = docsOverride
    ? path.resolve(docsOverride)
    : path.join(await resolveSystemDocumentsDir(env), "dline");
  return { dataRoot: getDlineDataDir(env), homeRoot: getDlineHomePath(env), documentsRoot };
}
