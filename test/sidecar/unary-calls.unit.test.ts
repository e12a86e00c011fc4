import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { createContextKey, createContextValues, type HandlerContext, type Interceptor } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { SystemService } from "../../core/src/gen/dline/v1/system_pb.js";
import { CallSignal } from "../../core/src/server/call-signal.js";
import { connectHandler } from "../../core/src/server/node-adapter.js";

// The plain unary path (server/unary-fast-path.ts) gives handlers and interceptors what connect's
// own handler gives them: a signal that aborts when the client goes away or the call is done,
// and the interceptors' answer headers.

const servers: http.Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

type HealthAnswer = { status: string; serverVersion: string; uptimeMs: bigint; pid: number };
type Health = (req: unknown, ctx: HandlerContext) => Promise<HealthAnswer> | HealthAnswer;

async function serveHealth(
  health: Health,
  extra: { interceptors?: Interceptor[]; shutdownSignal?: AbortSignal; readMaxBytes?: number } = {},
): Promise<string> {
  const handler = connectHandler({
    services: [
      { typeName: SystemService.typeName, load: async () => (router) => router.service(SystemService, { health }) },
    ],
    ...extra,
  });
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/dline.v1.SystemService/Health`;
}

const OK = { status: "ok", serverVersion: "t", uptimeMs: 1n, pid: 1 };

/** A Connect JSON call that the client abandons once `abandon` resolves. */
function abandonedCall(url: string, abandon: Promise<unknown>): Promise<void> {
  return new Promise((resolve) => {
    const req = http.request(url, { method: "POST", headers: { "content-type": "application/json" } });
    req.on("error", () => resolve());
    req.on("close", () => resolve());
    req.end("{}");
    void abandon.then(() => req.destroy());
  });
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe("plain unary calls", () => {
  it("abort the signal a handler holds when the client goes away", async () => {
    const started = deferred();
    const aborted = deferred<unknown>();
    const url = await serveHealth(async (_req, ctx) => {
      ctx.signal.addEventListener("abort", () => aborted.resolve(ctx.signal.reason));
      started.resolve();
      return new Promise<never>(() => {});
    });
    await abandonedCall(url, started.promise);
    expect(String(await aborted.promise)).toMatch(/The call ended/);
  });

  it("give an aborted signal to a handler that looks only after the client went away", async () => {
    const started = deferred();
    const goneAway = deferred();
    const seen = deferred<boolean>();
    const url = await serveHealth(async (_req, ctx) => {
      started.resolve();
      await goneAway.promise;
      seen.resolve(ctx.signal.aborted);
      return OK;
    });
    // node:http's own close listener (which closes the response) runs before this one.
    servers.at(-1)!.on("connection", (socket) => socket.on("close", () => goneAway.resolve()));
    await abandonedCall(url, started.promise);
    expect(await seen.promise).toBe(true);
  });

  it("abort the signal once the call is done, and interceptors see the handler's signal", async () => {
    let handlerSignal: (() => AbortSignal) | undefined;
    let interceptorSignal: AbortSignal | undefined;
    const seeSignal: Interceptor = (next) => async (req) => {
      interceptorSignal = req.signal;
      return next(req);
    };
    const url = await serveHealth(
      (_req, ctx) => {
        handlerSignal = () => ctx.signal;
        return OK;
      },
      { interceptors: [seeSignal] },
    );
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "ok" });
    expect(interceptorSignal?.aborted).toBe(true);
    expect(handlerSignal!()).toBe(interceptorSignal);
    expect(String(interceptorSignal?.reason)).toMatch(/The call is done/);
  });

  it("abort a running call's signal when the shutdown signal aborts", async () => {
    const shutdown = new AbortController();
    const started = deferred();
    const url = await serveHealth(
      async (_req, ctx) => {
        started.resolve();
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        throw new Error("stopped");
      },
      { shutdownSignal: shutdown.signal },
    );
    const answer = fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    await started.promise;
    shutdown.abort(new Error("shutting down"));
    expect((await answer).status).toBe(500);
  });

  it("give the handler what an interceptor passed on: its headers, context values and signal", async () => {
    const user = createContextKey("nobody");
    const passOn: Interceptor = (next) => async (req) => {
      const values = createContextValues();
      values.set(user, "alice");
      const header = new Headers(req.header);
      header.set("x-added", "yes");
      return next({ ...req, header, contextValues: values });
    };
    let seen: { user: string; added: string | null; aborted: boolean; path: string } | undefined;
    const url = await serveHealth(
      (_req, ctx) => {
        seen = {
          user: ctx.values.get(user),
          added: ctx.requestHeader.get("x-added"),
          aborted: ctx.signal.aborted,
          path: new URL(ctx.url).pathname,
        };
        return OK;
      },
      { interceptors: [passOn] },
    );
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(200);
    expect(seen).toEqual({ user: "alice", added: "yes", aborted: false, path: "/dline.v1.SystemService/Health" });
  });

  it("answer with the headers and trailers an interceptor sets, as connect does", async () => {
    const headers: Interceptor = (next) => async (req) => {
      const res = await next(req);
      res.header.set("x-from-interceptor", "1");
      res.trailer.set("x-trailer", "2");
      return {
        ...res,
        header: new Headers([
          ["x-replaced", "3"],
          ["content-type", "application/json"],
        ]),
      };
    };
    const url = await serveHealth(() => OK, { interceptors: [headers] });
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-replaced")).toBe("3");
    expect(res.headers.get("x-from-interceptor")).toBeNull();
    expect(res.headers.get("trailer-x-trailer")).toBe("2");
  });
});

describe("compressed calls (connect's handler, with connect-node's compression loaded on first need)", () => {
  it("accept gzip and brotli request bodies, and refuse one that inflates past the read limit", async () => {
    const url = await serveHealth(() => OK, { readMaxBytes: 1024 });
    for (const [encoding, body] of [
      ["gzip", gzipSync("{}")],
      ["br", brotliCompressSync("{}")],
    ] as const) {
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "content-encoding": encoding },
        body,
      });
      expect(res.status, encoding).toBe(200);
      expect(await res.json()).toMatchObject({ status: "ok" });
    }
    const bomb = gzipSync(JSON.stringify({ padding: "x".repeat(100_000) }));
    const refused = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "gzip" },
      body: bomb,
    });
    expect(await refused.json()).toMatchObject({ code: "resource_exhausted" });
    const unknown = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "content-encoding": "zstd" },
      body: "{}",
    });
    expect(await unknown.json()).toMatchObject({ code: "unimplemented" });
  });
});

describe("CallSignal", () => {
  it("is made on demand, keeps the first reason, and follows a linked signal", () => {
    const early = new CallSignal();
    early.abort("first");
    early.abort("second");
    expect(early.signal.aborted).toBe(true);
    expect(early.signal.reason).toBe("first");

    const held = new CallSignal();
    const signal = held.signal;
    expect(signal.aborted).toBe(false);
    expect(held.signal).toBe(signal);
    held.abort("done");
    expect(signal.reason).toBe("done");

    const shutdown = new AbortController();
    const linked = new CallSignal(shutdown.signal);
    const linkedSignal = linked.signal;
    shutdown.abort("shutdown");
    expect(linkedSignal.reason).toBe("shutdown");

    const lateShutdown = new AbortController();
    lateShutdown.abort("already");
    expect(new CallSignal(lateShutdown.signal).signal.reason).toBe("already");
  });
});
