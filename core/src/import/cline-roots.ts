import * as os from "node:os";
import * as path from "node:path";

/** The folders where Cline keeps data, resolved from the sidecar's environment. */
export interface ClineRoots {
  /** Legacy task roots (each expected to hold `tasks/`), in a fixed order, with a label. */
  legacyRoots: { label: string; dir: string }[];
  /** Cline 4's data directory. */
  dataDir: string;
  /** Where Cline 4 sessions live. */
  sessionsDir: string;
  /** `<data dir>/workspaces/chat`: sessions run there have no project. */
  chatWorkspaceDir: string;
}

export const VSCODE_VARIANTS = ["Code", "Code - Insiders", "VSCodium"] as const;
const EXTENSION_ID = "saoudrizwan.claude-dev";

/** An environment variable, trimmed; empty counts as unset. */
function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

function homeOf(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string {
  const order = platform === "win32" ? ["USERPROFILE", "HOME"] : ["HOME", "USERPROFILE"];
  for (const name of order) {
    const v = envValue(env, name);
    if (v) return v;
  }
  return os.homedir();
}

/** The user folder of a VS Code variant on this platform. */
function variantUserDir(variant: string, home: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string {
  const p = platform === "win32" ? path.win32 : path.posix;
  if (platform === "darwin") return p.join(home, "Library", "Application Support", variant);
  if (platform === "win32") return p.join(envValue(env, "APPDATA") ?? p.join(home, "AppData", "Roaming"), variant);
  return p.join(home, ".config", variant);
}

/**
 * Resolves every Cline root (docs/cline-import.md): the globalStorage of the extension in each
 * VS Code variant, `~/.cline/data`, and Cline 4's data and sessions folders
 * (CLINE_SESSION_DATA_DIR, CLINE_DATA_DIR, CLINE_DIR/data, each trimmed, empty = unset).
 */
export function resolveClineRoots(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): ClineRoots {
  const p = platform === "win32" ? path.win32 : path.posix;
  const home = homeOf(env, platform);
  const homeData = p.join(home, ".cline", "data");
  const clineDir = envValue(env, "CLINE_DIR");
  const dataDir = envValue(env, "CLINE_DATA_DIR") ?? (clineDir ? p.join(clineDir, "data") : homeData);
  const sessionsDir = envValue(env, "CLINE_SESSION_DATA_DIR") ?? p.join(dataDir, "sessions");
  const legacyRoots: ClineRoots["legacyRoots"] = VSCODE_VARIANTS.map((variant) => ({
    label: variant,
    dir: p.join(variantUserDir(variant, home, env, platform), "User", "globalStorage", EXTENSION_ID),
  }));
  legacyRoots.push({ label: "cline-data", dir: homeData });
  // Cline's CLI keeps its tasks in its data directory: when that is moved, look there too.
  if (dataDir !== homeData) legacyRoots.push({ label: "cline-data-dir", dir: dataDir });
  return { legacyRoots, dataDir, sessionsDir, chatWorkspaceDir: p.join(dataDir, "workspaces", "chat") };
}
