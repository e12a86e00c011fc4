/**
 * How every git process of the checkpoint module is isolated from the user's git and from the
 * workspace: the environment it runs with and the settings given on its command line. Nothing
 * the workspace or the user's git setup names may run (hooks, fsmonitor, filters, textconv,
 * external diff, pager, aliases, includes, credential helpers) or shape a snapshot.
 *
 * - No inherited GIT_* variable, and none of the other variables git reads a program from
 *   (EDITOR, VISUAL, PAGER, SSH_ASKPASS, PREFIX): they are dropped.
 * - No system config (GIT_CONFIG_NOSYSTEM) and no global one: HOME and XDG_CONFIG_HOME point at
 *   an empty folder of the shadow repository, so neither `~/.gitconfig` nor git's default
 *   global ignore and attributes files exist for it.
 * - The repository config is the shadow repository's own (GIT_DIR), never the workspace's
 *   `.git/config`; it names the empty hooks folder and turns fsmonitor off (shadow-repo.ts).
 * - The workspace's `.gitattributes` are overridden by the shadow repository's
 *   `info/attributes` (attributes-file.ts): file bytes are stored as they are.
 */
export const CHECKPOINT_IDENTITY = { name: "Dline Checkpoint", email: "checkpoint@dline.invalid" };

/** Variables outside GIT_* that git reads a program or a config path from. */
const PROGRAM_VARIABLES = new Set(["EDITOR", "VISUAL", "PAGER", "SSH_ASKPASS", "PREFIX", "LESS", "LV"]);

/** Settings given on every command line (they beat any config file). */
export const COMMAND_LINE_SETTINGS: readonly string[] = [
  "-c",
  "commit.gpgSign=false",
  "-c",
  "tag.gpgSign=false",
  "-c",
  "core.quotePath=false",
  "-c",
  "core.autocrlf=false",
  "-c",
  "core.safecrlf=false",
  // The workspace may belong to another user; only the command line (or a global config) may say so.
  "-c",
  "safe.directory=*",
  "-c",
  "core.excludesFile=/dev/null",
  "-c",
  "core.attributesFile=/dev/null",
];

/** The GIT_* variables the checkpoint module itself sets (simple-git's environment guard lets only these through). */
export const OWN_GIT_VARIABLES: readonly string[] = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_CONFIG_NOSYSTEM",
  "GIT_TERMINAL_PROMPT",
  "GIT_LITERAL_PATHSPECS",
  "GIT_AUTHOR_NAME",
  "GIT_AUTHOR_EMAIL",
  "GIT_COMMITTER_NAME",
  "GIT_COMMITTER_EMAIL",
  "GIT_OPTIONAL_LOCKS",
  "GIT_INDEX_FILE",
];

export interface GitEnvironmentOptions {
  gitDir: string;
  workTree: string;
  /** An empty folder: HOME for git (no global config) and the hooks path. */
  emptyDir: string;
  /** The environment to start from (PATH, locale-independent settings). */
  baseEnv: NodeJS.ProcessEnv;
}

export function isolatedGitEnv(o: GitEnvironmentOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(o.baseEnv)) {
    const upper = k.toUpperCase();
    if (!upper.startsWith("GIT_") && !PROGRAM_VARIABLES.has(upper)) env[k] = v;
  }
  return Object.assign(env, {
    GIT_DIR: o.gitDir,
    GIT_WORK_TREE: o.workTree,
    GIT_CONFIG_NOSYSTEM: "1",
    HOME: o.emptyDir,
    XDG_CONFIG_HOME: o.emptyDir,
    GIT_TERMINAL_PROMPT: "0",
    // Paths we pass are file names, never patterns.
    GIT_LITERAL_PATHSPECS: "1",
    GIT_AUTHOR_NAME: CHECKPOINT_IDENTITY.name,
    GIT_AUTHOR_EMAIL: CHECKPOINT_IDENTITY.email,
    GIT_COMMITTER_NAME: CHECKPOINT_IDENTITY.name,
    GIT_COMMITTER_EMAIL: CHECKPOINT_IDENTITY.email,
    LC_ALL: "C",
  });
}
