import { format } from "node:util";
import type { Logger } from "./logger.js";

/** A library's diagnostic line is cut here in the log (it may echo a whole malformed message). */
const MAX_LINE_CHARS = 500;

/**
 * Sends what libraries write with `console` to the log as JSON lines. Under `dline-core acp`,
 * stdout is the protocol channel (a stray `console.log` would corrupt it) and stderr holds the
 * JSON log an editor may parse: the ACP SDK reports protocol slips with `console.error`
 * ("Got response to unknown request 999"), a plain-text line among the JSON ones.
 */
export function routeConsoleToLog(logger: Logger): void {
  const line = (args: unknown[]) => ({ message: format(...args).slice(0, MAX_LINE_CHARS) });
  console.error = (...args: unknown[]) => logger.warn("library diagnostic", line(args));
  console.warn = (...args: unknown[]) => logger.warn("library diagnostic", line(args));
  console.log = (...args: unknown[]) => logger.info("library output", line(args));
  console.info = (...args: unknown[]) => logger.info("library output", line(args));
  console.debug = (...args: unknown[]) => logger.debug("library output", line(args));
}
