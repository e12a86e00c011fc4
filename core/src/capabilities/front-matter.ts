/**
 * The small front matter capability files use (`---` lines around `key: value` pairs). Values
 * are strings, or lists written `[a, b]` or as `- item` lines below the key. Anything richer
 * is not needed by rules, workflows, skills or subagent definitions, so no YAML library.
 */
export interface FrontMatter {
  fields: Record<string, string | string[]>;
  body: string;
}

function unquote(value: string): string {
  const v = value.trim();
  if (v.length >= 2 && ((v.startsWith('"') && v.endsWith('"')) || (v.startsWith("'") && v.endsWith("'"))))
    return v.slice(1, -1);
  return v;
}

export function parseFrontMatter(text: string): FrontMatter {
  const normalized = text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  if (!normalized.startsWith("---\n")) return { fields: {}, body: normalized };
  const end = normalized.indexOf("\n---", 4);
  if (end < 0) return { fields: {}, body: normalized };
  const header = normalized.slice(4, end);
  const afterFence = normalized.indexOf("\n", end + 4);
  const body = afterFence < 0 ? "" : normalized.slice(afterFence + 1);
  const fields: Record<string, string | string[]> = {};
  let listKey: string | undefined;
  for (const line of header.split("\n")) {
    const item = /^\s+-\s*(.*)$/.exec(line) ?? /^-\s+(.*)$/.exec(line);
    if (item && listKey) {
      const current = fields[listKey];
      fields[listKey] = [...(Array.isArray(current) ? current : []), unquote(item[1] ?? "")];
      continue;
    }
    const [, key, raw] = /^([A-Za-z0-9_-]+)\s*:\s*(.*)$/.exec(line) ?? [];
    if (key === undefined || raw === undefined) continue;
    const value = raw.trim();
    listKey = undefined;
    if (value === "") {
      listKey = key;
      fields[key] = [];
    } else if (value.startsWith("[") && value.endsWith("]")) {
      fields[key] = value
        .slice(1, -1)
        .split(",")
        .map(unquote)
        .filter((v) => v.length > 0);
    } else {
      fields[key] = unquote(value);
    }
  }
  return { fields, body };
}

export function stringField(fields: FrontMatter["fields"], key: string): string | undefined {
  const value = fields[key];
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** A list field; a plain string is split on commas (`tools: read_file, list_files`). */
export function listField(fields: FrontMatter["fields"], key: string): string[] | undefined {
  const value = fields[key];
  if (Array.isArray(value)) return value;
  if (typeof value === "string")
    return value
      .split(",")
      .map((v) => v.trim())
      .filter(Boolean);
  return undefined;
}
