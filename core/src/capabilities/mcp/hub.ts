/**
 * All MCP connections of this sidecar, keyed by descriptor file and server name. A changed
 * descriptor replaces its connection; `stopAll` runs when the sidecar stops. The hub turns a
 * connected server's tools into ToolDefinitions named `mcp__<server>__<tool>`.
 */
import * as path from "node:path";
import type { ToolDefinition } from "../../agent/index.js";
import type { Logger } from "../../logging/logger.js";
import type { McpServerEntry } from "./config.js";
import { McpConnection, type McpState } from "./connection.js";

export interface McpServerStatus {
  state: McpState;
  tools: string[];
  restarts: number;
  lastError?: string;
}

/** Provider tool names allow [A-Za-z0-9_-], at most 64 characters. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
}

/** The tool's JSON schema as providers take it: an object schema, without the `$schema` marker. */
function providerSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = schema;
  return { ...rest, type: "object" };
}

export class McpHub {
  private readonly connections = new Map<string, { configKey: string; connection: McpConnection }>();
  private sdk: Promise<typeof import("./sdk.js")> | undefined;
  private stopping = false;

  constructor(private readonly logger: Logger) {}

  private keyOf(entry: McpServerEntry): string {
    return `${entry.sourcePath}\u0000${entry.name}`;
  }

  /** The entry's connection (created, not started); a changed descriptor stops the old one. */
  private connectionFor(entry: McpServerEntry, workspaceRoot: string | undefined): McpConnection | undefined {
    if (!entry.config || this.stopping) return undefined;
    const key = this.keyOf(entry);
    const existing = this.connections.get(key);
    if (existing && existing.configKey === entry.configKey) return existing.connection;
    if (existing) void existing.connection.stop();
    const baseDir = entry.origin !== "global" && workspaceRoot ? workspaceRoot : path.dirname(entry.sourcePath);
    const connection = new McpConnection(
      entry.name,
      entry.config,
      baseDir,
      () => (this.sdk ??= import("./sdk.js")),
      this.logger,
    );
    this.connections.set(key, { configKey: entry.configKey, connection });
    return connection;
  }

  /**
   * Stops the connections of servers whose descriptor was removed or renamed: those whose
   * descriptor file is one of `scanned` (or inside a scanned folder) but not among `visible`.
   */
  prune(visible: readonly McpServerEntry[], scanned: readonly string[]): void {
    const keep = new Set(visible.map((e) => this.keyOf(e)));
    for (const [key, { connection }] of this.connections) {
      const source = key.slice(0, key.indexOf("\u0000"));
      const covered = scanned.some((p) => source === p || path.dirname(source) === p);
      if (covered && !keep.has(key)) {
        this.connections.delete(key);
        void connection.stop();
      }
    }
  }

  /**
   * Stops the connections (process) of the given servers (toggled off, no longer trusted, or
   * their session ended); a later turn that may use one starts a new connection on demand.
   */
  async stopServers(entries: readonly McpServerEntry[]): Promise<void> {
    const stopping: Promise<void>[] = [];
    for (const entry of entries) {
      const key = this.keyOf(entry);
      const existing = this.connections.get(key);
      if (!existing) continue;
      this.connections.delete(key);
      this.logger.info("mcp server stopped", { server: entry.name });
      stopping.push(existing.connection.stop());
    }
    await Promise.all(stopping);
  }

  /** Whether this hub holds a connection (running or restarting) for the entry. */
  has(entry: McpServerEntry): boolean {
    return this.connections.has(this.keyOf(entry));
  }

  status(entry: McpServerEntry): McpServerStatus {
    const existing = this.connections.get(this.keyOf(entry));
    if (!existing || existing.configKey !== entry.configKey) return { state: "stopped", tools: [], restarts: 0 };
    const c = existing.connection;
    return { state: c.state, tools: c.tools.map((t) => t.name), restarts: c.restarts, lastError: c.lastError };
  }

  /** Starts the enabled servers (on demand) and returns their tools; a server that fails is skipped. */
  async toolsFor(entries: readonly McpServerEntry[], workspaceRoot: string | undefined): Promise<ToolDefinition[]> {
    const perServer = await Promise.all(
      entries.map(async (entry) => {
        const connection = this.connectionFor(entry, workspaceRoot);
        if (!connection) return [];
        try {
          await connection.ensureStarted();
        } catch {
          return []; // reported through the status
        }
        return connection.tools.map((tool): ToolDefinition => ({
          name: mcpToolName(entry.name, tool.name),
          description: `${tool.description || tool.name} (MCP server "${entry.name}")`,
          inputSchema: providerSchema(tool.inputSchema),
          readOnly: tool.readOnly,
          approvalCategory: () => "useMcp",
          async execute(input, ctx) {
            try {
              const result = await connection.callTool(tool.name, input, ctx.signal);
              return { content: result.text || "(no output)", isError: result.isError };
            } catch (err) {
              if (ctx.signal.aborted) throw err;
              return { content: `MCP server "${entry.name}" failed: ${(err as Error).message}`, isError: true };
            }
          },
        }));
      }),
    );
    // Names cut to 64 characters may collide: the first keeps the name.
    const seen = new Set<string>();
    return perServer.flat().filter((t) => !seen.has(t.name) && seen.add(t.name));
  }

  /** Starts a server now (ListCapabilities with connect_mcp); errors are kept in its status. */
  async start(entry: McpServerEntry, workspaceRoot: string | undefined): Promise<void> {
    await this.connectionFor(entry, workspaceRoot)
      ?.ensureStarted()
      .catch(() => {});
  }

  async stopAll(): Promise<void> {
    this.stopping = true;
    await Promise.all([...this.connections.values()].map((c) => c.connection.stop()));
    this.connections.clear();
  }
}
