import * as fs from "node:fs";
import * as path from "node:path";

/**
 * Finds the sidecar binary: `--core PATH`, then `$DLINE_CORE`, then `dline-core` next to this
 * CLI (dist/dline and dist/dline-core ship side by side).
 */
export function locateCore(explicit: string | undefined, env: NodeJS.ProcessEnv, cliFile: string): string {
  const candidates = [explicit, env.DLINE_CORE, path.join(path.dirname(cliFile), "dline-core")].filter(
    (c): c is string => typeof c === "string" && c.length > 0,
  );
  for (const candidate of candidates) {
    if (fs.existsSync(candidate)) return path.resolve(candidate);
  }
  throw new Error(
    `Cannot find the dline-core sidecar (looked at: ${candidates.join(", ")}). ` +
      `Build it with "npm run build" or set DLINE_CORE.`,
  );
}
