import { execFile, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { promisify } from "node:util";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { afterEach, describe, expect, it } from "vitest";
import { createDlineClients, sidecarTransport, spawnSidecar } from "../../core/src/client/index.js";
import { SettingsScope } from "../../core/src/gen/dline/v1/settings_pb.js";
import { SystemService } from "../../core/src/gen/dline/v1/system_pb.js";
import {
  makeTestRoots,
  sidecarBinary,
  startSidecar,
  assertBinaryBuilt,
  type RunningSidecar,
} from "../helpers/sidecar.js";
import { nth } from "../helpers/items.js";

const run = promisify(execFile);
const running: RunningSidecar[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function start(...args: Parameters<typeof startSidecar>) {
  const s = await startSidecar(...args);
  running.push(s);
  return s;
}

async function curlJson(url: string, method: string, body: string, headers: string[] = []) {
  const args = ["-s", "-o", "-", "-w", "\n%{http_code}", "-H", "Content-Type: application/json", "-d", body];
  for (const h of headers) args.push("-H", h);
  const { stdout } = await run("curl", [...args, `${url}/dline.v1.${method}`]);
  const newline = stdout.lastIndexOf("\n");
  return { status: Number(stdout.slice(newline + 1)), body: JSON.parse(stdout.slice(0, newline)) };
}

describe("sidecar handshake", () => {
  it("prints exactly one ready line with url, token and pid", async () => {
    const s = await start();
    const h = s.process.handshake;
    expect(Object.keys(h)).toEqual(["dline", "protocol", "version", "url", "token", "pid"]);
    expect(h.dline).toBe("ready");
    expect(h.protocol).toBe(1);
    expect(h.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Buffer.from(h.token, "base64url").length).toBeGreaterThanOrEqual(16);
    expect(h.pid).toBe(s.process.child.pid);
  });

  it("answers Health and Initialize through the TypeScript client", async () => {
    const s = await start();
    const health = await s.clients.system.health({});
    expect(health.status).toBe("ok");
    expect(health.pid).toBe(s.process.handshake.pid);
    const init = await s.clients.system.initialize({ clientName: "vitest", clientVersion: "1", workspaceRoots: [] });
    expect(init.protocolVersion).toBe(1);
    expect(init.dataRoot).toBe(path.join(s.roots.dlineDir, "data"));
    expect(init.homeRoot).toBe(s.roots.homeDir);
    expect(init.documentsRoot).toBe(s.roots.docsDir);
    expect(init.gitVersion).toMatch(/^\d+\.\d+/);
    expect(fs.existsSync(init.logFile)).toBe(true);
  });

  it("answers Health to plain curl with Connect JSON", async () => {
    const s = await start();
    const { url, token } = s.process.handshake;
    const res = await curlJson(url, "SystemService/Health", "{}", [`Authorization: Bearer ${token}`]);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("ok");
    expect(typeof res.body.uptimeMs).toBe("string"); // int64 travels as a JSON string
  });

  it("refuses a missing or wrong token with unauthenticated (HTTP 401)", async () => {
    const s = await start();
    const { url, token } = s.process.handshake;
    const missing = await curlJson(url, "SystemService/Health", "{}");
    expect(missing).toEqual({ status: 401, body: expect.objectContaining({ code: "unauthenticated" }) });
    const wrong = await curlJson(url, "SystemService/Health", "{}", [`Authorization: Bearer ${token}x`]);
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe("unauthenticated");
    const client = createClient(SystemService, sidecarTransport(url, "not-the-token"));
    const err = await client.health({}).catch((e: unknown) => e);
    expect(ConnectError.from(err).code).toBe(Code.Unauthenticated);
    // Nothing of the real token leaks into the error.
    expect(JSON.stringify(wrong.body)).not.toContain(token);
  });

  it("answers invalid_argument to a malformed JSON body", async () => {
    const s = await start();
    const { url, token } = s.process.handshake;
    const res = await curlJson(url, "SystemService/Initialize", '{"clientName": ', [`Authorization: Bearer ${token}`]);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("invalid_argument");
  });

  it("answers every method of the contract (none is left unimplemented)", async () => {
    const s = await start();
    const { url, token } = s.process.handshake;
    const services = ["system", "settings", "task", "history", "checkpoint", "import"];
    const {
      file_dline_v1_system,
      file_dline_v1_settings,
      file_dline_v1_task,
      file_dline_v1_history,
      file_dline_v1_checkpoint,
      file_dline_v1_import,
    } = await import("../helpers/proto-files.js");
    const files = [
      file_dline_v1_system,
      file_dline_v1_settings,
      file_dline_v1_task,
      file_dline_v1_history,
      file_dline_v1_checkpoint,
      file_dline_v1_import,
    ];
    expect(files).toHaveLength(services.length);
    for (const file of files) {
      for (const service of file.services) {
        for (const method of service.methods) {
          // Shutdown would stop the sidecar under the rest of the loop (it has its own test).
          if (method.methodKind !== "unary" || method.name === "Shutdown") continue;
          // An empty request: whatever the answer (often invalid_argument), never "unimplemented".
          const res = await curlJson(url, `${service.name}/${method.name}`, "{}", [`Authorization: Bearer ${token}`]);
          expect(res.body.code, `${service.name}/${method.name}`).not.toBe("unimplemented");
        }
      }
    }
  });
});

describe("sidecar lifecycle", () => {
  it("exits with status 0 when its stdin closes", async () => {
    const s = await startSidecar();
    const before = Date.now();
    const code = await s.stop();
    expect(code).toBe(0);
    expect(Date.now() - before).toBeLessThan(10_000); // generous: only catches a hang
  });

  it("exits on SIGTERM and on Shutdown", async () => {
    const a = await startSidecar();
    a.process.child.kill("SIGTERM");
    expect(await a.process.exited).toBe(0);
    const b = await startSidecar();
    await b.clients.system.shutdown({ reason: "test" });
    expect(await b.process.exited).toBe(0);
  });

  it("brings up two sidecars started at once on a cold addon cache", async () => {
    const roots = makeTestRoots();
    const [a, b] = await Promise.all([start({ roots }), start({ roots })]);
    const [ha, hb] = await Promise.all([a.clients.system.health({}), b.clients.system.health({})]);
    expect(ha.status).toBe("ok");
    expect(hb.status).toBe("ok");
    expect(a.process.handshake.url).not.toBe(b.process.handshake.url);
    // The first call that needs SQLite extracts the addon: both sidecars at the same moment.
    const [la, lb] = await Promise.all([a.clients.history.listTasks({}), b.clients.history.listTasks({})]);
    expect([la.tasks, lb.tasks]).toEqual([[], []]);
    const nativeDir = path.join(roots.homeDir, "cache", "native");
    const logOf = (s: RunningSidecar) => fs.readFileSync(s.stderrFile, "utf8");
    expect(logOf(a) + logOf(b)).not.toMatch(/cannot load|failed/);
    const entries = fs.readdirSync(nativeDir);
    expect(entries).toHaveLength(1);
    // Only the final file remains: no half-written temp files.
    expect(fs.readdirSync(path.join(nativeDir, nth(entries, 0, "native addon folder")))).toEqual([
      "better_sqlite3.node",
    ]);
  });

  it("listens on a Unix socket created 0600", async () => {
    const roots = makeTestRoots();
    const socket = path.join(roots.base, "core.sock");
    const s = await start({ roots, args: ["--listen", `unix:${socket}`] });
    expect(s.process.handshake.url).toBe(`unix:${socket}`);
    expect(fs.statSync(socket).mode & 0o777).toBe(0o600);
    expect((await s.clients.system.health({})).status).toBe("ok");
  });

  it("listens on [::1] when asked, and answers there", async () => {
    const roots = makeTestRoots();
    const s = await start({ roots, args: ["--listen", "[::1]:0"] });
    expect(s.process.handshake.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
    // The TypeScript client kit (a unary call and a server stream), and curl as any HTTP client.
    expect((await s.clients.system.health({})).status).toBe("ok");
    const watching = new AbortController();
    for await (const snapshot of s.clients.settings.watchSettings(
      { scope: SettingsScope.GLOBAL },
      { signal: watching.signal },
    )) {
      expect(snapshot.revision).toBeGreaterThanOrEqual(0n);
      break;
    }
    watching.abort();
    const health = await curlJson(s.process.handshake.url, "SystemService/Health", "{}", [
      `Authorization: Bearer ${s.process.handshake.token}`,
    ]);
    expect([health.status, health.body.status]).toEqual([200, "ok"]);
  });

  it("a port already taken: exits 1 saying so with the address, and the other listener keeps its port", async () => {
    assertBinaryBuilt();
    const roots = makeTestRoots();
    const other = net.createServer((socket) => socket.end("still here"));
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    try {
      const port = (other.address() as net.AddressInfo).port;
      const child = spawn(sidecarBinary, ["serve", "--listen", `127.0.0.1:${port}`], {
        env: roots.env,
        stdio: ["pipe", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      const code = await new Promise((resolve) => child.once("exit", resolve));
      expect(code).toBe(1);
      expect(stdout).toBe("");
      expect(stderr).toContain(`127.0.0.1:${port}`);
      expect(stderr).toMatch(/already in use/);
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect(port, "127.0.0.1");
        let text = "";
        socket.on("data", (d: Buffer) => (text += d.toString()));
        socket.on("end", () => resolve(text));
        socket.on("error", reject);
      });
      expect(answer).toBe("still here");
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it("refuses to listen beyond loopback", async () => {
    assertBinaryBuilt();
    const roots = makeTestRoots();
    const child = spawn(sidecarBinary, ["serve", "--listen", "0.0.0.0:0"], {
      env: roots.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const code = await new Promise((resolve) => child.once("exit", resolve));
    expect(code).toBe(2);
    expect(stderr).toContain("loopback only");
  });

  it("runs from any folder with a minimal environment and no node_modules", async () => {
    assertBinaryBuilt();
    const roots = makeTestRoots();
    const copy = path.join(roots.base, "bin", "dline-core");
    fs.mkdirSync(path.dirname(copy));
    fs.copyFileSync(sidecarBinary, copy);
    fs.chmodSync(copy, 0o755);
    const { stdout } = await run(copy, ["--version"], {
      cwd: roots.base,
      env: { PATH: "/usr/bin:/bin", HOME: roots.home },
    });
    expect(stdout).toMatch(/^dline-core \S+ \(protocol 1, node v\d+\.\d+\.\d+\)$/m);
    const help = await run(copy, ["serve", "--help"], {
      cwd: roots.base,
      env: { PATH: "/usr/bin:/bin", HOME: roots.home },
    });
    expect(help.stdout).toContain("--listen");
    const s = await spawnSidecar({ binary: copy, cwd: roots.base, env: { PATH: "/usr/bin:/bin", HOME: roots.home } });
    try {
      const clients = createDlineClients(s.handshake.url, s.handshake.token);
      const init = await clients.system.initialize({ clientName: "minimal-env" });
      expect(init.homeRoot).toBe(path.join(roots.home, ".dline"));
      expect(init.dataRoot).toBe(path.join(roots.home, ".dline", "data"));
      expect(init.documentsRoot).toBe(path.join(roots.home, "Documents", "dline"));
    } finally {
      await s.stop();
    }
  });

  it("sees the folder it runs in, not the one it was built in", async () => {
    assertBinaryBuilt();
    const roots = makeTestRoots();
    const folder = path.join(roots.base, "elsewhere");
    fs.mkdirSync(folder);
    // A preloaded script (Node's --require) reports what the running process sees.
    const probe = path.join(roots.base, "probe.cjs");
    const report = path.join(roots.base, "probe.json");
    fs.writeFileSync(
      probe,
      // Written whole, then renamed: the poll below never reads a file still being written.
      `setTimeout(() => { const fs = require("fs"); fs.writeFileSync(${JSON.stringify(report + ".tmp")}, JSON.stringify({ cwd: process.cwd(), resolved: require("path").resolve("x") })); fs.renameSync(${JSON.stringify(report + ".tmp")}, ${JSON.stringify(report)}); }, 300);`,
    );
    const s = await spawnSidecar({
      binary: sidecarBinary,
      cwd: folder,
      env: { ...roots.env, NODE_OPTIONS: `--require ${probe}` },
    });
    try {
      // Settings and tasks load their lock library on first use: make sure they have.
      await createDlineClients(s.handshake.url, s.handshake.token).settings.getSettings({});
      await expect.poll(() => fs.existsSync(report), { timeout: 5000 }).toBe(true);
      const seen = JSON.parse(fs.readFileSync(report, "utf8")) as { cwd: string; resolved: string };
      expect(seen.cwd).toBe(folder);
      expect(seen.resolved).toBe(path.join(folder, "x"));
    } finally {
      await s.stop();
    }
  });
});
