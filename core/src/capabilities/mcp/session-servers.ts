/**
 * MCP servers an editor gives one task for its lifetime (ACP `session/new` `mcpServers`):
 * stdio `{name, command, args, env: [{name, value}]}` or HTTP `{type: "http", name, url,
 * headers: [{name, value}]}`. They are checked like descriptors from files and registered under
 * the task id; they need no trust (the editor passed them) and no toggles.
 */
import { createHash } from "node:crypto";
import type { McpServerEntry } from "./config.js";
import { parseServer } from "./config.js";

interface NameValue {
  name: string;
  value: string;
}

export type SessionMcpServer =
  | { type?: undefined | "stdio"; name: string; command: string; args?: string[]; env?: NameValue[] }
  | { type: "http" | "sse"; name: string; url: string; headers?: NameValue[] };

const record = (pairs: NameValue[] | undefined): Record<string, string> =>
  Object.fromEntries((pairs ?? []).map((p) => [p.name, p.value]));

export function sessionServerEntries(taskId: string, servers: readonly SessionMcpServer[]): McpServerEntry[] {
  return servers.map((server) => {
    const raw =
      "url" in server
        ? { type: server.type === "sse" ? "sse" : "streamableHttp", url: server.url, headers: record(server.headers) }
        : { command: server.command, args: server.args ?? [], env: record(server.env) };
    const parsed = parseServer(server.name, raw);
    return {
      name: server.name,
      origin: "session",
      sourcePath: `session:${taskId}`,
      config: parsed.config,
      configKey: createHash("sha256")
        .update(JSON.stringify(parsed.config ?? null))
        .digest("hex")
        .slice(0, 16),
      disabledInFile: false,
      error: parsed.error,
    };
  });
}
