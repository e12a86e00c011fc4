import { execFile } from "node:child_process";

/** `git --version` of the system git, "" when git is missing. Memoised per instance. */
export function gitVersionProbe(env: NodeJS.ProcessEnv = process.env): () => Promise<string> {
  let cached: Promise<string> | undefined;
  return () =>
    (cached ??= new Promise((resolve) => {
      execFile("git", ["--version"], { env, timeout: 5000 }, (err, stdout) => {
        resolve(
          err
            ? ""
            : stdout
                .toString()
                .trim()
                .replace(/^git version\s*/, ""),
        );
      });
    }));
}
