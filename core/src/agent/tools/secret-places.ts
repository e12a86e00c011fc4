/**
 * Whether a command line reaches a place that holds secrets, so that it is never auto-approved
 * as a "safe" command (the model's `requires_approval: false`), even when it is one plain command:
 * - `/proc`: every process's environment is there (`/proc/$PPID/environ` is the sidecar's, with
 *   the API key it was started with; `/proc/*\/environ` has the person's shell's);
 * - the core's storage roots, where the stored keys are (the tools refuse them; a command would not);
 * - a folder holding one of those (`grep -r key ~`, `ls /`), and, when the workspace itself holds
 *   one (a workspace at the home folder), any command: `rg key` searches the working folder.
 * The words of the command are read as paths as a shell would give them: quotes removed, a
 * leading `~` and `$VAR` / `${VAR}` expanded, a glob cut at its first wildcard, a relative word
 * taken from the working folder, a link followed. A word that is not a path costs a lookup only.
 */
import * as path from "node:path";
import { isInsideFolder, realpathOrUndefined } from "./real-paths.js";

const PROCESS_TABLE = "/proc";

export function reachesSecretPlaces(
  command: string,
  cwd: string,
  protectedPaths: readonly string[],
  env: NodeJS.ProcessEnv,
): boolean {
  const places = [PROCESS_TABLE, ...protectedPaths];
  const touches = (p: string) => places.some((place) => isInsideFolder(place, p) || isInsideFolder(p, place));
  if (/\benviron\b/i.test(command) || touches(cwd)) return true;
  for (const word of command.split(/[\s=]+/)) {
    const candidate = pathOf(word, cwd, env);
    if (!candidate) continue;
    if (touches(candidate)) return true;
    if (touches(realOfDeepestExisting(candidate))) return true;
  }
  return false;
}

/** The absolute path a word of the command names, as the shell would expand it. */
function pathOf(word: string, cwd: string, env: NodeJS.ProcessEnv): string | undefined {
  let text = word.replace(/["']/g, "");
  if (!text || text.startsWith("-")) return undefined;
  const home = env.HOME ?? "";
  if (text === "~" || text.startsWith("~/")) text = home + text.slice(1);
  text = text.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, braced: string | undefined, bare: string | undefined) => {
    const name = braced ?? bare ?? "";
    return name === "PWD" ? cwd : (env[name] ?? "");
  });
  const wildcard = text.search(/[*?[]/);
  if (wildcard >= 0) text = text.slice(0, text.lastIndexOf("/", wildcard) + 1) || ".";
  return path.resolve(cwd, text);
}

/** Where a path really leads: its deepest existing folder's real path, and the rest as given. */
function realOfDeepestExisting(p: string): string {
  let existing = p;
  while (realpathOrUndefined(existing) === undefined && path.dirname(existing) !== existing)
    existing = path.dirname(existing);
  const real = realpathOrUndefined(existing) ?? existing;
  return path.join(real, path.relative(existing, p));
}
