/**
 * One MCP server's connection: started on demand, its tools listed, restarted with a bounded
 * backoff when it crashes (a stdio process exits, an HTTP server stops answering), stopped with
 * the sidecar. Its status and last error are kept for the RPC. Errors never carry the
 * descriptor's env or headers (they may hold secrets).
 */
import * as path from "node:path";
import type { Logger } from "../../logging/logger.js";
import type { McpServerConfig } from "./config.js";

type Sdk = typeof import("./sdk.js");
type SdkClient = InstanceType<Sdk["Client"]>;

export type McpState = "stopped" | "starting" | "connected" | "restarting" | "failed";

export interface McpToolInfo {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  readOnly: boolean;
}

export interface McpCallResult {
  text: string;
  isError: boolean;
}

const CONNECT_TIMEOUT_MS = 30_000;
const DEFAULT_CALL_TIMEOUT_MS = 60_000;
/** Restart delays after consecutive crashes; past the last one the server is left failed. */
const BACKOFF_MS = [250, 1000, 3000, 8000];
/** A failed server is tried again on demand after this long. */
const FAILED_RETRY_AFTER_MS = 60_000;
/** A connection that stayed up this long resets the crash count. */
const STABLE_AFTER_MS = 30_000;

export class McpConnection {
  state: McpState = "stopped";
  tools: McpToolInfo[] = [];
  restarts = 0;
  lastError: string | undefined;
  private client: SdkClient | undefined;
  private starting: Promise<void> | undefined;
  private crashesInARow = 0;
  private connectedAt = 0;
  private failedAt = 0;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private stderrTail = "";
  private connectAttempts = 0;

  constructor(
    readonly name: string,
    readonly config: McpServerConfig,
    /** Folder relative `cwd`s resolve against, and the default cwd of a stdio server. */
    private readonly baseDir: string,
    private readonly loadSdk: () => Promise<Sdk>,
    private readonly logger: Logger,
  ) {}

  /** Starts the server if needed and waits until it is connected (or throws why it is not). */
  async ensureStarted(): Promise<void> {
    if (this.stopped) throw new Error("the sidecar is stopping");
    if (this.state === "connected") return;
    if (this.state === "failed" && Date.now() - this.failedAt < FAILED_RETRY_AFTER_MS)
      throw new Error(this.lastError ?? "failed");
    if (this.state === "restarting" && this.restartTimer) {
      // After repeated failures a turn does not wait for yet another attempt: the backoff decides.
      if (this.crashesInARow > 1) throw new Error(this.lastError ?? "restarting");
      // After one crash, a turn that needs it does not wait for the backoff timer.
      clearTimeout(this.restartTimer);
      this.restartTimer = undefined;
    }
    this.starting ??= this.connect().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async connect(): Promise<void> {
    // Every start after the first is a restart (after a crash or a failed start).
    if (this.connectAttempts++ > 0) this.restarts++;
    this.state = this.restarts > 0 ? "restarting" : "starting";
    const sdk = await this.loadSdk();
    const client = new sdk.Client({ name: "dline", version: "1" }, { capabilities: {} });
    const transport =
      this.config.transport === "stdio"
        ? new sdk.StdioClientTransport({
            command: this.config.command,
            args: this.config.args,
            env: { ...sdk.getDefaultEnvironment(), ...this.config.env },
            cwd: this.config.cwd ? path.resolve(this.baseDir, this.config.cwd) : this.baseDir,
            stderr: "pipe",
          })
        : new sdk.StreamableHTTPClientTransport(new URL(this.config.url), {
            requestInit: { headers: this.config.headers },
          });
    this.stderrTail = "";
    if (transport instanceof sdk.StdioClientTransport) {
      transport.stderr?.on("data", (chunk: Buffer) => {
        this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-2000);
      });
    }
    let closedEarly = false;
    client.onclose = () => {
      closedEarly = true;
      if (this.client === client) this.onUnexpectedClose();
    };
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
      if (closedEarly) throw new Error("the server closed the connection while starting");
      const tools: McpToolInfo[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: CONNECT_TIMEOUT_MS });
        for (const t of page.tools) {
          tools.push({
            name: t.name,
            description: t.description ?? "",
            inputSchema: t.inputSchema ?? { type: "object" },
            readOnly: t.annotations?.readOnlyHint === true,
          });
        }
        cursor = page.nextCursor;
      } while (cursor && tools.length < 1000);
      if (this.stopped) {
        await client.close().catch(() => {});
        throw new Error("the sidecar is stopping");
      }
      this.client = client;
      this.tools = tools;
      this.state = "connected";
      this.connectedAt = Date.now();
      this.logger.info("mcp server connected", { server: this.name, tools: tools.length });
    } catch (err) {
      await client.close().catch(() => {});
      const message = this.describe(err);
      this.lastError = message;
      this.logger.warn("mcp server failed to start", { server: this.name, error: message });
      this.scheduleRestart();
      throw new Error(message, { cause: err });
    }
  }

  private describe(err: unknown): string {
    const base = err instanceof Error ? err.message : String(err);
    const tail = this.stderrTail.trim().split("\n").slice(-5).join("\n");
    return (tail ? `${base}; stderr: ${tail}` : base).slice(0, 2000);
  }

  private onUnexpectedClose(cause?: string): void {
    if (this.stopped) return;
    this.client = undefined;
    this.tools = [];
    if (Date.now() - this.connectedAt >= STABLE_AFTER_MS) this.crashesInARow = 0;
    const what = this.config.transport === "stdio" ? "the server process exited" : "the connection closed";
    this.lastError = this.describe(new Error(cause ? `${what}: ${cause}` : what));
    this.logger.warn("mcp server stopped unexpectedly", { server: this.name, error: this.lastError });
    this.scheduleRestart();
  }

  /** Restarts after a delay that grows with consecutive failures; gives up after a few. */
  private scheduleRestart(): void {
    if (this.stopped) return;
    const delay = BACKOFF_MS[this.crashesInARow];
    this.crashesInARow++;
    if (delay === undefined) {
      this.state = "failed";
      this.failedAt = Date.now();
      this.crashesInARow = 0;
      return;
    }
    this.state = "restarting";
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.stopped || this.starting || this.state === "connected") return;
      this.starting = this.connect()
        .catch(() => {})
        .finally(() => (this.starting = undefined));
    }, delay);
    this.restartTimer.unref();
  }

  async callTool(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpCallResult> {
    await this.ensureStarted();
    const client = this.client;
    if (!client) throw new Error(this.lastError ?? "not connected");
    try {
      const result = await client.callTool({ name: tool, arguments: args }, undefined, {
        signal,
        timeout: this.config.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
        resetTimeoutOnProgress: true,
      });
      return { text: contentText(result.content), isError: result.isError === true };
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      // An HTTP server that went away is noticed here: reconnect in the background.
      if (
        this.config.transport === "http" &&
        /fetch failed|ECONNREFUSED|ECONNRESET|socket/i.test(
          String((err as Error).message) + String((err as Error).cause ?? ""),
        )
      ) {
        if (this.client === client) {
          this.client = undefined;
          void client.close().catch(() => {});
          this.onUnexpectedClose((err as Error).message);
        }
      }
      throw err;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.restartTimer);
    const client = this.client;
    this.client = undefined;
    this.state = "stopped";
    await this.starting?.catch(() => {});
    await client?.close().catch(() => {});
  }
}

function contentText(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content
    .map((item: { type?: string; text?: string; mimeType?: string; resource?: { uri?: string; text?: string } }) => {
      if (item.type === "text") return item.text ?? "";
      if (item.type === "resource") return item.resource?.text ?? `[resource ${item.resource?.uri ?? ""}]`;
      if (item.type === "resource_link") return `[resource link ${(item as { uri?: string }).uri ?? ""}]`;
      return `[${item.type ?? "content"}${item.mimeType ? ` ${item.mimeType}` : ""} omitted]`;
    })
    .join("\n");
}
