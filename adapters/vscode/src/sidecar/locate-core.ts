import * as fs from "node:fs";
import * as path from "node:path";

export interface CoreLocation {
  path: string;
  /** Where the path came from, for the log. */
  source: "setting" | "DLINE_CORE" | "bundled" | "repository";
}

/**
 * Finds the dline-core executable: the `dline.corePath` setting, else `$DLINE_CORE`, else the
 * binary bundled with the extension (`bin/dline-core`), else the repository build
 * (`dist/dline-core`, two folders up) of a development checkout. An explicit choice (setting or
 * variable) that is not an executable file is an error: falling back would hide the mistake.
 */
export function locateCore(setting: string | undefined, env: NodeJS.ProcessEnv, extensionPath: string): CoreLocation {
  const explicit: CoreLocation | undefined = setting
    ? { path: setting, source: "setting" }
    : env.DLINE_CORE
      ? { path: env.DLINE_CORE, source: "DLINE_CORE" }
      : undefined;
  if (explicit) {
    if (isExecutable(explicit.path)) return { ...explicit, path: path.resolve(explicit.path) };
    const origin = explicit.source === "setting" ? "the dline.corePath setting" : "the DLINE_CORE variable";
    throw new Error(`The Dline core named by ${origin} is not an executable file: ${explicit.path}`);
  }
  const candidates: CoreLocation[] = [
    { path: path.join(extensionPath, "bin", "dline-core"), source: "bundled" },
    { path: path.resolve(extensionPath, "..", "..", "dist", "dline-core"), source: "repository" },
  ];
  const found = candidates.find((c) => isExecutable(c.path));
  if (found) return found;
  throw new Error(
    `The Dline core was not found (looked at: ${candidates.map((c) => c.path).join(", ")}). Set dline.corePath.`,
  );
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}
