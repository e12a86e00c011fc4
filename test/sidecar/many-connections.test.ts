/**
 * An editor with many streams and idle keep-alive connections is never cut by the bound on
 * connections that have not shown the token, while silent peers without the token still are.
 * Against the real dist/dline-core, over real sockets.
 */
import { setMaxListeners } from "node:events";
import * as http from "node:http";
import * as net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { SettingsScope } from "../../core/src/gen/dline/v1/settings_pb.js";
import { boundUnauthenticatedConnections } from "../../core/src/server/unauthenticated.js";
import { startSidecar, type RunningSidecar } from "../helpers/sidecar.js";

const running: RunningSidecar[] = [];
const cleanups: (() => void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

/** The sidecar's bound on connections without the token (core/src/main.ts). */
const BOUND = 64;
const IDLE_CONNECTIONS = BOUND + 6;
const STREAMS = 100;
const SILENT_PEERS = 100;

/** One keep-alive connection of its own (an agent of one socket) that makes Health calls. */
class KeepAliveConnection {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  readonly sockets = new Set<net.Socket>();
  /** Closes of this connection's sockets that this side did not ask for. */
  closedByServer = 0;
  private closing = false;

  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  /** One Health call; answers its HTTP status and whether it went over an already open socket. */
  health(): Promise<{ status: number; reused: boolean }> {
    return new Promise((resolve, reject) => {
      const req = http.request(`${this.url}/dline.v1.SystemService/Health`, {
        method: "POST",
        agent: this.agent,
        headers: { "content-type": "application/json", authorization: `Bearer ${this.token}` },
      });
      req.on("socket", (socket) => {
        if (this.sockets.has(socket)) return;
        this.sockets.add(socket);
        socket.once("close", () => {
          if (!this.closing) this.closedByServer++;
        });
      });
      req.on("response", (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
      });
      req.on("error", reject);
      req.end("{}");
    });
  }

  close(): void {
    this.closing = true;
    this.agent.destroy();
  }
}

async function waitUntil(cond: () => boolean, what: string, ms = 30_000): Promise<void> {
  for (const end = Date.now() + ms; !cond(); await new Promise((r) => setTimeout(r, 20))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  }
}

describe("an editor's connections are never cut", () => {
  it(`${IDLE_CONNECTIONS} idle keep-alive connections and ${STREAMS} streams opened at once all stay open, while silent peers without the token are closed`, async () => {
    const s = await start();
    const { url, token } = s.process.handshake;

    // Idle keep-alive connections, more than the bound: each made one call, then waits.
    const idle = Array.from({ length: IDLE_CONNECTIONS }, () => new KeepAliveConnection(url, token));
    cleanups.push(() => idle.forEach((c) => c.close()));
    const first = await Promise.allSettled(idle.map((c) => c.health()));
    expect(first.filter((r) => r.status === "rejected").map((r) => String(r.reason))).toEqual([]);

    // Many streams opened in one burst, each on a connection of its own.
    const controller = new AbortController();
    setMaxListeners(STREAMS + 10, controller.signal); // one listener per stream
    cleanups.push(() => controller.abort());
    const revisions = Array.from({ length: STREAMS }, () => [] as bigint[]);
    const failures: string[] = [];
    const streams = revisions.map(async (seen) => {
      try {
        for await (const res of s.clients.settings.watchSettings(
          { scope: SettingsScope.GLOBAL },
          { signal: controller.signal },
        ))
          seen.push(res.revision);
      } catch (err) {
        if (!controller.signal.aborted) failures.push(String(err));
      }
    });
    await waitUntil(
      () => revisions.every((seen) => seen.length > 0) || failures.length > 0,
      "every stream's first snapshot",
    );
    expect(failures).toEqual([]);

    // A change reaches every stream: they are all still open.
    const { revision } = await s.clients.settings.updateSettings({
      scope: SettingsScope.GLOBAL,
      patch: { hookTimeoutSeconds: 31 },
    });
    await waitUntil(
      () => revisions.every((seen) => seen.includes(revision)) || failures.length > 0,
      "the change on every stream",
    );
    expect(failures).toEqual([]);

    // Silent peers without the token, past the bound: the oldest are closed...
    let silentClosed = 0;
    const silent: net.Socket[] = [];
    cleanups.push(() => silent.forEach((socket) => socket.destroy()));
    const port = Number(new URL(url).port);
    for (let i = 0; i < SILENT_PEERS; i++) {
      const socket = net.connect({ host: "127.0.0.1", port });
      socket.on("error", () => {});
      socket.on("close", () => silentClosed++);
      silent.push(socket);
      await new Promise((resolve) => socket.once("connect", resolve));
    }
    await waitUntil(() => silentClosed >= SILENT_PEERS - BOUND, `${SILENT_PEERS - BOUND} silent peers closed`);

    // ...and none of the editor's: each idle connection answers again on its own socket.
    const again = await Promise.allSettled(idle.map((c) => c.health()));
    expect(again.filter((r) => r.status === "rejected").map((r) => String(r.reason))).toEqual([]);
    expect(again.map((r) => (r as PromiseFulfilledResult<{ status: number; reused: boolean }>).value)).toEqual(
      idle.map(() => ({ status: 200, reused: true })),
    );
    expect(idle.map((c) => c.closedByServer)).toEqual(idle.map(() => 0));
    expect(idle.map((c) => c.sockets.size)).toEqual(idle.map(() => 1));
    expect(failures).toEqual([]);
    expect(revisions.filter((seen) => !seen.includes(revision))).toEqual([]);

    controller.abort();
    await Promise.all(streams);
  });
});

describe("the bound on connections without the token", () => {
  it("closes the oldest at once past its ceiling, even within their grace", async () => {
    const server = http.createServer(() => {});
    boundUnauthenticatedConnections(server, { max: 2, graceMs: 600_000, ceiling: 4 });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => server.close());
    const port = (server.address() as net.AddressInfo).port;
    const closed: number[] = [];
    const sockets: net.Socket[] = [];
    cleanups.push(() => sockets.forEach((socket) => socket.destroy()));
    for (let i = 0; i < 6; i++) {
      const socket = net.connect({ host: "127.0.0.1", port });
      socket.on("error", () => {});
      socket.on("close", () => closed.push(i));
      sockets.push(socket);
      await new Promise((resolve) => socket.once("connect", resolve));
    }
    await waitUntil(() => closed.length >= 2, "two connections closed");
    // Within the grace nothing else is closed: the four newest stay.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(closed.sort()).toEqual([0, 1]);
  });
});

async function start(): Promise<RunningSidecar> {
  const s = await startSidecar();
  running.push(s);
  return s;
}
