import * as fs from "node:fs";
import * as path from "node:path";

/**
 * A `git` in `dir` that runs the shell line `beforeStatus` before each `git status` (the scan of
 * a workspace: slow it down, count it), then the real git with the same arguments. Returns the
 * PATH that finds it first.
 */
export function gitShimBeforeStatus(dir: string, beforeStatus: string): string {
  const realGit = process.env
    .PATH!.split(path.delimiter)
    .map((d) => path.join(d, "git"))
    .find((p) => fs.existsSync(p))!;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, "git"),
    `#!/bin/sh\ncase " $* " in *" status "*) ${beforeStatus};; esac\nexec "${realGit}" "$@"\n`,
    { mode: 0o755 },
  );
  return `${dir}${path.delimiter}${process.env.PATH}`;
}
