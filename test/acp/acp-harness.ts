/**
 * An ACP client for tests: spawns the REAL `dist/dline-core acp` binary with isolated roots and
 * speaks to it through the official SDK's client side over the child's stdin/stdout. The
 * client records every session/update, answers permission requests with a policy the test
 * sets, and (when offered) serves fs/* from the real disk plus an "unsaved buffers" overlay and
 * terminal/* with real shell processes.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { sidecarBinary, type TestRoots } from "../helpers/sidecar.js";

export type PermissionPolicy = (
  req: acp.RequestPermissionRequest,
) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>;

export interface ClientTerminal {
  id: string;
  command: string;
  args: string[];
  cwd: string | undefined;
  output: string;
  exit: Promise<{ exitCode: number | null; signal: string | null }>;
  child: ChildProcess;
  released: boolean;
}

export interface AcpOffer {
  fs?: boolean;
  terminal?: boolean;
  /** Variables added to the agent's environment (as an editor's agent settings pass them). */
  env?: NodeJS.ProcessEnv;
}

export interface RunningAcpAgent {
  child: ChildProcess;
  agent: acp.ClientContext;
  connection: acp.ClientConnection;
  init: acp.InitializeResponse;
  /** Every session/update received, in order. */
  updates: acp.SessionNotification[];
  /** Every permission request received, in order. */
  permissions: acp.RequestPermissionRequest[];
  /** Extension notifications (method, params). */
  extNotifications: { method: string; params: unknown }[];
  fsCalls: { method: string; path: string; content?: string }[];
  terminals: ClientTerminal[];
  /** What fs/read_text_file returns instead of the disk for a path (unsaved editor buffers). */
  buffers: Map<string, string>;
  setPermissionPolicy(policy: PermissionPolicy): void;
  stderrFile: string;
  /** Resolves with the exit code (or signal) once the process is gone. */
  exited: Promise<number | string>;
  /** Closes stdin (as an editor that goes away) and waits for the exit. */
  stop(): Promise<number | string>;
}

export const allowOnce: PermissionPolicy = (req) => ({
  outcome: { outcome: "selected", optionId: req.options.find((o) => o.kind === "allow_once")!.optionId },
});
export const rejectOnce: PermissionPolicy = (req) => ({
  outcome: { outcome: "selected", optionId: req.options.find((o) => o.kind === "reject_once")!.optionId },
});

export async function startAcpAgent(roots: TestRoots, offer: AcpOffer = {}): Promise<RunningAcpAgent> {
  const stderrFile = path.join(roots.base, `acp-${Date.now()}-${Math.random().toString(36).slice(2)}.stderr`);
  const stderr = fs.openSync(stderrFile, "a");
  const child = spawn(sidecarBinary, ["acp"], {
    cwd: roots.base,
    env: { ...roots.env, ...offer.env },
    stdio: ["pipe", "pipe", stderr],
  });
  fs.closeSync(stderr);
  const exited = new Promise<number | string>((resolve) =>
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown")),
  );
  const updates: acp.SessionNotification[] = [];
  const permissions: acp.RequestPermissionRequest[] = [];
  const extNotifications: { method: string; params: unknown }[] = [];
  const fsCalls: { method: string; path: string; content?: string }[] = [];
  const terminals: ClientTerminal[] = [];
  const buffers = new Map<string, string>();
  let policy: PermissionPolicy = allowOnce;

  const app = acp
    .client({ name: "dline-test-client" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params);
    })
    .onNotification("*", ({ method, params }) => {
      extNotifications.push({ method, params });
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      permissions.push(params);
      return policy(params);
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      fsCalls.push({ method: "read", path: params.path });
      return { content: buffers.get(params.path) ?? fs.readFileSync(params.path, "utf8") };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      fsCalls.push({ method: "write", path: params.path, content: params.content });
      fs.writeFileSync(params.path, params.content);
      return {};
    })
    .onRequest(acp.methods.client.terminal.create, ({ params }) => {
      const id = `term-${terminals.length + 1}`;
      const proc = spawn(params.command, params.args ?? [], {
        cwd: params.cwd ?? undefined,
        stdio: ["ignore", "pipe", "pipe"],
      });
      const terminal: ClientTerminal = {
        id,
        command: params.command,
        args: params.args ?? [],
        cwd: params.cwd ?? undefined,
        output: "",
        child: proc,
        released: false,
        exit: new Promise((resolve) => proc.once("close", (code, signal) => resolve({ exitCode: code, signal }))),
      };
      proc.stdout.on("data", (d: Buffer) => (terminal.output += d.toString("utf8")));
      proc.stderr.on("data", (d: Buffer) => (terminal.output += d.toString("utf8")));
      terminals.push(terminal);
      return { terminalId: id };
    })
    .onRequest(acp.methods.client.terminal.output, async ({ params }) => {
      const t = terminalOf(terminals, params.terminalId);
      const done = await Promise.race([t.exit, Promise.resolve(undefined)]);
      return { output: t.output, truncated: false, exitStatus: done ?? null };
    })
    .onRequest(
      acp.methods.client.terminal.waitForExit,
      async ({ params }) => terminalOf(terminals, params.terminalId).exit,
    )
    .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
      terminalOf(terminals, params.terminalId).child.kill("SIGTERM");
      return {};
    })
    .onRequest(acp.methods.client.terminal.release, ({ params }) => {
      const t = terminalOf(terminals, params.terminalId);
      t.released = true;
      t.child.kill("SIGTERM");
      return {};
    });

  const stream = acp.ndJsonStream(
    Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout!),
  );
  const connection = app.connect(stream);
  const init = await connection.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {
      fs: { readTextFile: Boolean(offer.fs), writeTextFile: Boolean(offer.fs) },
      terminal: Boolean(offer.terminal),
    },
    clientInfo: { name: "dline-test-client", version: "1.0.0" },
  });
  return {
    child,
    agent: connection.agent,
    connection,
    init,
    updates,
    permissions,
    extNotifications,
    fsCalls,
    terminals,
    buffers,
    stderrFile,
    exited,
    setPermissionPolicy: (p) => {
      policy = p;
    },
    stop: async () => {
      child.stdin!.end();
      const code = await exited;
      connection.close();
      return code;
    },
  };
}

function terminalOf(terminals: ClientTerminal[], id: string): ClientTerminal {
  const t = terminals.find((x) => x.id === id);
  if (!t) throw acp.RequestError.resourceNotFound(id);
  return t;
}

/** The updates of one session, by kind. */
export function updatesOf(agent: RunningAcpAgent, sessionId: string): acp.SessionUpdate[] {
  return agent.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update);
}

/** The agent's streamed text of a session (agent_message_chunk text, in order). */
export function agentText(updates: acp.SessionUpdate[]): string {
  return updates
    .filter(
      (u): u is Extract<acp.SessionUpdate, { sessionUpdate: "agent_message_chunk" }> =>
        u.sessionUpdate === "agent_message_chunk",
    )
    .map((u) => (u.content.type === "text" ? u.content.text : ""))
    .join("");
}

/** Waits until `check` holds (polling), or fails after `ms`. */
export async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 25));
  }
}
