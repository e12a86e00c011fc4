import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { InstanceLayout } from "../../core/src/storage/instance-layout.js";
import { createLogger, type Logger } from "../../core/src/logging/logger.js";

/** A fresh InstanceLayout over three temp roots (in-process unit tests of storage modules). */
export function tempLayout(prefix = "dline-storage-"): { base: string; layout: InstanceLayout } {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const layout = new InstanceLayout({
    dataRoot: path.join(base, "dline", "data"),
    homeRoot: path.join(base, "dline-home"),
    documentsRoot: path.join(base, "docs"),
  });
  return { base, layout };
}

/** A logger that keeps its lines, so tests can check what was (not) logged. */
export function recordingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  return { logger: createLogger({ write: (l) => lines.push(l), close: () => {} }, "debug"), lines };
}

export function readJson(file: string): any {
  return JSON.parse(fs.readFileSync(file, "utf8"));
}

/** Files beside `file` that are kept-aside copies of it. */
export function corruptCopies(file: string): string[] {
  const dir = path.dirname(file);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((n) => n.startsWith(`${path.basename(file)}.corrupt-`))
    .map((n) => path.join(dir, n));
}

export function modeOf(file: string): number {
  return fs.statSync(file).mode & 0o777;
}
