/**
 * MCP server descriptors: `settings/mcp_settings.json` (global, `{"mcpServers": {name: ...}}`),
 * `mcp/*.json` under the documents root and `<project>/.agents/mcp/*.json` (each file either
 * `{"mcpServers": {...}}` or one server, named after the file). A server is
 * `{command, args?, env?, cwd?}` (stdio) or `{url, headers?}` (streamable HTTP; `type` may say
 * "stdio" or "streamableHttp"/"http"). These files are only read here, never written: a
 * malformed one is reported (data_loss) and left exactly as it is.
 */
import * as path from "node:path";
import { createHash } from "node:crypto";
import type { FileCache } from "../file-cache.js";
import { listFilesRecursive } from "../file-cache.js";
import { OUTSIDE_WORKSPACE, type ReadBoundary } from "../read-boundary.js";
import type { CapabilityOrigin } from "../catalog.js";

export type McpServerConfig =
  | {
      transport: "stdio";
      command: string;
      args: string[];
      env: Record<string, string>;
      cwd?: string;
      timeoutMs?: number;
    }
  | { transport: "http"; url: string; headers: Record<string, string>; timeoutMs?: number };

export interface McpServerEntry {
  name: string;
  origin: CapabilityOrigin;
  sourcePath: string;
  config?: McpServerConfig;
  /** Hash of the config: a changed descriptor restarts the server. */
  configKey: string;
  /** The server's own `disabled: true` in its descriptor (the toggles still apply on top). */
  disabledInFile: boolean;
  error?: string;
}

export interface McpFileProblem {
  path: string;
  /** "data_loss" for a malformed file kept as it is; "permission_denied" for one not read (read-boundary.ts). */
  code: "data_loss" | "permission_denied";
  message: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function stringRecord(v: unknown): Record<string, string> | undefined {
  if (v === undefined) return {};
  if (!isObject(v)) return undefined;
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== "string") return undefined;
    out[k] = val;
  }
  return out;
}

export function parseServer(
  name: string,
  raw: unknown,
): { config?: McpServerConfig; disabled: boolean; error?: string } {
  if (!SERVER_NAME.test(name))
    return { disabled: false, error: "server names use letters, digits, '.', '_' and '-' (at most 64)" };
  if (!isObject(raw)) return { disabled: false, error: "expected an object" };
  const disabled = raw.disabled === true;
  const timeoutMs = typeof raw.timeout === "number" && raw.timeout > 0 ? raw.timeout * 1000 : undefined;
  const type =
    typeof raw.type === "string" ? raw.type : typeof raw.transportType === "string" ? raw.transportType : undefined;
  if (typeof raw.url === "string" && type !== "stdio") {
    let url: URL;
    try {
      url = new URL(raw.url);
    } catch {
      return { disabled, error: "url is not a valid URL" };
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") return { disabled, error: "url must be http or https" };
    if (type === "sse") return { disabled, error: "the legacy SSE transport is not supported; use streamable HTTP" };
    const headers = stringRecord(raw.headers);
    if (!headers) return { disabled, error: "headers must map names to strings" };
    return { disabled, config: { transport: "http", url: url.toString(), headers, timeoutMs } };
  }
  if (typeof raw.command !== "string" || !raw.command)
    return { disabled, error: "a server needs a command (stdio) or a url (streamable HTTP)" };
  const args =
    raw.args === undefined
      ? []
      : Array.isArray(raw.args) && raw.args.every((a) => typeof a === "string")
        ? raw.args
        : undefined;
  if (!args) return { disabled, error: "args must be a list of strings" };
  const env = stringRecord(raw.env);
  if (!env) return { disabled, error: "env must map names to strings" };
  const cwd = typeof raw.cwd === "string" ? raw.cwd : undefined;
  return { disabled, config: { transport: "stdio", command: raw.command, args, env, cwd, timeoutMs } };
}

function entriesOf(servers: Record<string, unknown>, origin: CapabilityOrigin, sourcePath: string): McpServerEntry[] {
  return Object.entries(servers).map(([name, raw]) => {
    const parsed = parseServer(name, raw);
    return {
      name,
      origin,
      sourcePath,
      config: parsed.config,
      configKey: createHash("sha256")
        .update(JSON.stringify(parsed.config ?? null))
        .digest("hex")
        .slice(0, 16),
      disabledInFile: parsed.disabled,
      error: parsed.error,
    };
  });
}

/** Reads every MCP descriptor visible from a workspace; later locations override earlier names. */
export function readMcpServers(
  cache: FileCache,
  locations: { globalSettingsFile: string; dirs: { origin: CapabilityOrigin; dir: string }[] },
  /** The workspace's descriptors are read only within this (read-boundary.ts). */
  boundary?: ReadBoundary,
): { servers: McpServerEntry[]; problems: McpFileProblem[] } {
  const problems: McpFileProblem[] = [];
  const byName = new Map<string, McpServerEntry>();
  const add = (entries: McpServerEntry[]) => entries.forEach((e) => byName.set(e.name, e));
  const readJson = (file: string): unknown => {
    const text = cache.read(file);
    if (text === undefined) return undefined;
    if (!text.trim()) return {};
    try {
      return JSON.parse(text);
    } catch (err) {
      problems.push({
        path: file,
        code: "data_loss",
        message: `${path.basename(file)} is not valid JSON (${(err as Error).message}); it was kept as it is and its servers are not loaded`,
      });
      return undefined;
    }
  };
  const settings = readJson(locations.globalSettingsFile);
  if (settings !== undefined) {
    if (isObject(settings) && (settings.mcpServers === undefined || isObject(settings.mcpServers))) {
      add(entriesOf(settings.mcpServers ?? {}, "global", locations.globalSettingsFile));
    } else {
      problems.push({
        path: locations.globalSettingsFile,
        code: "data_loss",
        message: 'mcp_settings.json must be an object with "mcpServers"; it was kept as it is',
      });
    }
  }
  for (const { origin, dir } of locations.dirs) {
    const within = origin === "workspace" ? boundary : undefined;
    for (const rel of listFilesRecursive(dir, 0, (n) => /\.json$/i.test(n), within)) {
      const file = path.join(dir, rel);
      if (within && !within.allows(file)) {
        problems.push({ path: file, code: "permission_denied", message: `${rel} is ${OUTSIDE_WORKSPACE}` });
        continue;
      }
      const value = readJson(file);
      if (value === undefined) continue;
      if (!isObject(value)) {
        problems.push({ path: file, code: "data_loss", message: `${rel} must be a JSON object; it was kept as it is` });
      } else if (isObject(value.mcpServers)) {
        add(entriesOf(value.mcpServers, origin, file));
      } else {
        add(entriesOf({ [rel.replace(/\.json$/i, "")]: value }, origin, file));
      }
    }
  }
  return { servers: [...byName.values()], problems };
}
