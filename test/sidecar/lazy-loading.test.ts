import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { SystemService } from "../../core/src/gen/dline/v1/system_pb.js";
import { DeferredHandler } from "../../core/src/server/deferred-handler.js";
import { connectHandler } from "../../core/src/server/node-adapter.js";
import { startSidecar, type RunningSidecar } from "../helpers/sidecar.js";

const running: RunningSidecar[] = [];
const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
  for (const server of servers.splice(0)) server.close();
});

const logOf = (s: RunningSidecar) => fs.readFileSync(s.stderrFile, "utf8");
const loadsIn = (log: string) =>
  log.split("\n").filter((line) => line.includes('"msg":"domain modules loaded"')).length;

async function serve(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function post(url: string, body = "{}"): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  return { status: res.status, body: await res.text() };
}

describe("services load on first need", () => {
  it("answers Initialize and Health without loading the domain modules; the first other call loads them once", async () => {
    const s = await startSidecar();
    running.push(s);
    await s.clients.system.initialize({ clientName: "vitest", clientVersion: "1", workspaceRoots: [] });
    expect((await s.clients.system.health({})).status).toBe("ok");
    expect(loadsIn(logOf(s))).toBe(0);
    // Two services that need the app, called at the same moment: one load serves both.
    const [tasks, settings] = await Promise.all([s.clients.history.listTasks({}), s.clients.settings.getSettings({})]);
    expect(tasks.tasks).toEqual([]);
    expect(settings.settings).toBeDefined();
    await expect.poll(() => loadsIn(logOf(s))).toBe(1);
    expect(logOf(s)).not.toMatch(/cannot load|loading the domain modules failed/);
  });

  it("answers unavailable while a service cannot load, and loads it at a later call", async () => {
    let attempts = 0;
    const handler = connectHandler({
      services: [
        {
          typeName: SystemService.typeName,
          load: async () => {
            if (++attempts === 1) throw new Error("disk not ready");
            return (router) =>
              router.service(SystemService, {
                health: () => ({ status: "ok", serverVersion: "t", uptimeMs: 1n, pid: 1 }),
              });
          },
        },
      ],
    });
    const url = await serve(handler);
    const first = await post(`${url}/dline.v1.SystemService/Health`);
    expect(first.status).toBe(503);
    expect(JSON.parse(first.body)).toMatchObject({ code: "unavailable" });
    const second = await post(`${url}/dline.v1.SystemService/Health`);
    expect(second.status).toBe(200);
    expect(JSON.parse(second.body)).toMatchObject({ status: "ok" });
    expect((await post(`${url}/dline.v1.SystemService/Nope`)).status).toBe(404);
    expect((await post(`${url}/dline.v1.OtherService/Health`)).status).toBe(404);
    expect(attempts).toBe(2);
  });

  it("holds requests that come before the handler is built, and retries a failed build", async () => {
    let builds = 0;
    const failures: unknown[] = [];
    const deferred = new DeferredHandler(
      async () => {
        if (++builds === 1) throw new Error("cannot build");
        return (_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("built");
      },
      (reason) => failures.push(reason),
    );
    const url = await serve(deferred.handle);
    const refused = await post(url);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body)).toMatchObject({ code: "unavailable" });
    expect(failures).toHaveLength(1);
    const [a, b] = await Promise.all([post(url), post(url)]);
    expect([a.body, b.body]).toEqual(["built", "built"]);
    expect(builds).toBe(2);
  });

  it("answers the calls its early answers take without building, builds for the first it does not, and gives a call they leave its body", async () => {
    let builds = 0;
    const deferred = new DeferredHandler(
      async () => {
        builds++;
        return (req, res, body) =>
          res.end(`built ${req.url} ${body ? Buffer.from(body).toString() : "(no body read)"}`);
      },
      () => {},
      {
        answers: {
          takes: (req) => req.url === "/early",
          answer: async (_req, body) =>
            Buffer.from(body).toString() === "leave"
              ? undefined
              : { contentType: "text/plain", body: Buffer.from(`early ${Buffer.from(body).toString()}`) },
        },
        readMaxBytes: 1024,
      },
    );
    const url = await serve(deferred.handle);
    expect((await post(`${url}/early`, "one")).body).toBe("early one");
    expect((await post(`${url}/early`, "two")).body).toBe("early two");
    expect(builds).toBe(0);
    // A call they do not take builds the listener, which then answers everything.
    expect((await post(`${url}/late`, "three")).body).toBe("built /late (no body read)");
    expect((await post(`${url}/early`, "four")).body).toBe("built /early (no body read)");
    expect(builds).toBe(1);

    // Early answers that take /early calls but leave each after reading it.
    const leaving = () =>
      serve(
        new DeferredHandler(
          async () => (req, res, body) =>
            res.end(`built ${req.url} ${body ? Buffer.from(body).toString() : "(no body read)"}`),
          () => {},
          { answers: { takes: (req) => req.url === "/early", answer: async () => undefined }, readMaxBytes: 1024 },
        ).handle,
      );
    // Left after they read it: the built listener gets the body they read.
    expect((await post(`${await leaving()}/early`, "leave")).body).toBe("built /early leave");
    // Past the limit: left to the listener unanswered (in the sidecar, connect answers resource_exhausted).
    expect((await post(`${await leaving()}/early`, "y".repeat(2048))).body).toMatch(/^built \/early y{1025,}$/);
    // Not taken: the listener reads it itself.
    expect((await post(`${await leaving()}/late`, "x")).body).toBe("built /late (no body read)");
  });
});
