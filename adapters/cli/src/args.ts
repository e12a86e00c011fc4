/** Parsed command line: positionals and `--flag [value]` options. */
export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string | true>;
}

/**
 * Parses `argv` given which flags take a value; every other `--flag` is a boolean.
 * `--flag=value` works for both. Unknown flags are refused by `checkFlags`.
 */
export function parseArgs(argv: string[], valueFlags: ReadonlySet<string>): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("--") || arg === "--") {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (eq > 0) flags.set(name, arg.slice(eq + 1));
    else if (valueFlags.has(name)) {
      const value = argv[++i];
      if (value === undefined) throw new UsageError(`--${name} needs a value.`);
      flags.set(name, value);
    } else flags.set(name, true);
  }
  return { positionals, flags };
}

export class UsageError extends Error {}

export function checkFlags(args: ParsedArgs, allowed: readonly string[]): void {
  for (const name of args.flags.keys()) {
    if (!allowed.includes(name)) throw new UsageError(`Unknown option --${name}.`);
  }
}

/**
 * Refuses words past the `max` a command takes: left out silently, `dline resume ID "go on"`
 * continued the task without the message. `hint` says what the person may have meant.
 */
export function checkPositionals(args: ParsedArgs, max: number, hint = ""): void {
  const extra = args.positionals.slice(max);
  if (extra.length === 0) return;
  const words = extra.map((w) => `"${w}"`).join(" ");
  throw new UsageError(`unexpected argument${extra.length > 1 ? "s" : ""} ${words}${hint ? `; ${hint}` : ""}.`);
}

export function stringFlag(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags.get(name);
  if (v === true) throw new UsageError(`--${name} needs a value.`);
  return v;
}

export function numberFlag(args: ParsedArgs, name: string): number | undefined {
  const v = stringFlag(args, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new UsageError(`--${name} needs a number, not "${v}".`);
  return n;
}
