/**
 * What keeps the tools away from the core itself, whatever the workspace is: the folders the
 * tools never read, write, list or search (the core's storage roots, which hold its settings,
 * secrets, tasks and shadow repositories), and the stored secret values that never leave a
 * tool's output unredacted (not to the model, the messages, the events or the command logs).
 */
import * as fs from "node:fs";
import * as path from "node:path";

export const REDACTED = "[redacted]";
/** Shorter values are not secrets worth hiding (and would redact ordinary words). */
const MIN_SECRET_CHARS = 8;

export interface ToolGuard {
  /** Real absolute paths the tools never reach (a path equal to one or inside one is refused). */
  readonly protectedPaths: readonly string[];
  /** The text with every stored secret value replaced by [redacted]. */
  redact(text: string): string;
  /** Redacts a stream of chunks: a secret split across two chunks is still caught. */
  redactStream(): StreamRedactor;
  /**
   * `env` without the variables that hold a secret (the model's API key the sidecar was started
   * with, a stored key): a command the model runs never needs them, and its output could carry
   * them past redaction in another form (reversed, encoded).
   */
  withoutSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv;
}

export interface StreamRedactor {
  /** The redacted text that can be passed on now (the possible start of a secret is held back). */
  push(chunk: string): string;
  /** The rest, at the end of the stream. */
  end(): string;
}

/** `paths` are resolved to their real locations (the ones that exist) and kept as given too. */
export function createToolGuard(paths: readonly string[], secretValues: readonly string[]): ToolGuard {
  const protectedPaths = [...new Set(paths.filter(Boolean).flatMap((p) => [path.resolve(p), realpathOrSelf(p)]))];
  const secrets = [...new Set(secretValues.filter((s) => typeof s === "string" && s.length >= MIN_SECRET_CHARS))].sort(
    (a, b) => b.length - a.length,
  );
  const redact = (text: string): string => {
    let out = text;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  };
  const longest = secrets[0]?.length ?? 0;
  return {
    protectedPaths,
    redact,
    withoutSecrets(env) {
      return Object.fromEntries(
        Object.entries(env).filter(([, value]) => !value || !secrets.some((secret) => value.includes(secret))),
      );
    },
    redactStream() {
      let held = "";
      return {
        push(chunk) {
          if (longest === 0) return chunk;
          const text = redact(held + chunk);
          // Hold back only an end that is the beginning of a secret (cut by the chunk boundary).
          let keep = Math.min(text.length, longest - 1);
          while (keep > 0 && !secrets.some((secret) => secret.startsWith(text.slice(text.length - keep)))) keep--;
          held = text.slice(text.length - keep);
          return text.slice(0, text.length - keep);
        },
        end() {
          const rest = redact(held);
          held = "";
          return rest;
        },
      };
    },
  };
}

/** A guard that protects nothing and redacts nothing (tools used outside a task, e.g. in tests of one tool). */
export const noToolGuard: ToolGuard = createToolGuard([], []);

/** Whether `absolute` (a real path) is one of the protected paths or inside one. */
export function isProtectedPath(guard: ToolGuard, absolute: string): boolean {
  return guard.protectedPaths.some(
    (p) => absolute === p || absolute.startsWith(p.endsWith(path.sep) ? p : `${p}${path.sep}`),
  );
}

function realpathOrSelf(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}
