/**
 * The shadow repository's config file: git's own keys (as `git init` wrote them) merged with
 * ours into one section per name, so that a key is never defined twice. Written by us as a
 * whole (never through `git config`), at creation and whenever an open finds it out of date.
 */
type Sections = Map<string, Map<string, { name: string; value: string }>>;

/** `[section "sub"]` for `section.sub.key`, `[section]` for `section.key`. */
function headerOf(section: string): string {
  const first = section.indexOf(".");
  return first < 0
    ? `[${section.toLowerCase()}]`
    : `[${section.slice(0, first).toLowerCase()} "${section.slice(first + 1)}"]`;
}

/** Reads the simple config files git init and this module write (no includes, no continuation lines). */
export function parseConfig(text: string): Sections {
  const sections: Sections = new Map();
  let current: Map<string, { name: string; value: string }> | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (!line || line.startsWith("#") || line.startsWith(";")) continue;
    const [header, section = "", subsection] = /^\[([A-Za-z0-9.-]+)(?:\s+"(.*)")?\]$/.exec(line) ?? [];
    if (header !== undefined) {
      const key =
        subsection !== undefined ? `[${section.toLowerCase()} "${subsection}"]` : `[${section.toLowerCase()}]`;
      current = sections.get(key) ?? new Map();
      sections.set(key, current);
      continue;
    }
    const eq = line.indexOf("=");
    const name = (eq < 0 ? line : line.slice(0, eq)).trim();
    const value = eq < 0 ? "true" : line.slice(eq + 1).trim();
    current?.set(name.toLowerCase(), { name, value });
  }
  return sections;
}

/** `existing` with `entries` (dotted keys, values already quoted where needed) set. */
export function mergeConfig(existing: string, entries: readonly (readonly [string, string])[]): string {
  const sections = parseConfig(existing);
  for (const [key, value] of entries) {
    const dot = key.lastIndexOf(".");
    const header = headerOf(key.slice(0, dot));
    const name = key.slice(dot + 1);
    const section = sections.get(header) ?? new Map<string, { name: string; value: string }>();
    section.set(name.toLowerCase(), { name, value });
    sections.set(header, section);
  }
  return [...sections]
    .map(([h, keys]) => `${h}\n${[...keys.values()].map((k) => `\t${k.name} = ${k.value}`).join("\n")}\n`)
    .join("");
}

/** A config value in double quotes: `#` and `;` stay literal, `\`, `"` and newlines escaped. */
export function quoteConfigValue(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
}

/**
 * The value of `section.key` when it is written as quoteConfigValue writes it (as this module
 * writes every value it sets); undefined otherwise, and git is asked.
 */
export function quotedConfigValue(text: string, section: string, key: string): string | undefined {
  const value = parseConfig(text).get(headerOf(section))?.get(key.toLowerCase())?.value;
  const quoted = value === undefined ? undefined : /^"((?:[^"\\]|\\["\\n])*)"$/.exec(value);
  return quoted?.[1]?.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c));
}
