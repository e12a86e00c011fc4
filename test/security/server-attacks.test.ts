/**
 * Attacks on the sidecar's server by a neighbour without the token, and on its start-up and
 * error paths, against the real dist/dline-core. Each `attack` holds when every check in it
 * passes; the file ends with "security attacks: N tried, N held" and the checks' tally line.
 */
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import * as path from "node:path";
import { afterAll, beforeAll, describe } from "vitest";
import { ConnectError } from "@connectrpc/connect";
import { makeTestRoots, sidecarBinary, startSidecar, type RunningSidecar } from "../helpers/sidecar.js";
import { attack, attackLine, check, redactions, stopOrKill, tallyLine, waitFor, withDeadline } from "./helpers.js";
import { nth } from "../helpers/items.js";

let main: RunningSidecar;
const sidecars: RunningSidecar[] = [];

beforeAll(async () => {
  main = await startSidecar();
  sidecars.push(main);
  redactions.push(main.process.handshake.token);
});
afterAll(async () => {
  console.log(attackLine());
  console.log(tallyLine());
  await Promise.all(sidecars.map((s) => stopOrKill(s)));
  for (const s of sidecars) fs.rmSync(s.roots.base, { recursive: true, force: true });
});

function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
}

/** POSTs `bytes` (sent in 1 MiB pieces) without a token; answers the status, or the error that ended the call. */
function postBig(url: string, bytes: number): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.request(`${url}/dline.v1.SettingsService/UpdateSettings`, {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(bytes) },
      agent: false,
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    const piece = Buffer.alloc(1024 * 1024, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < bytes) {
        sent += piece.byteLength;
        if (!req.write(piece)) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}

/** One raw HTTP/1.1 request (keep-alive, no token) on its own socket; answers the status line and whether the server closed the socket. */
function rawRequestThenWait(port: number, ms: number): Promise<{ status: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    let text = "";
    let timer: NodeJS.Timeout | undefined;
    socket.on("data", (d) => {
      text += d.toString("latin1");
      timer ??= setTimeout(() => {
        socket.destroy();
        resolve({ status: nth(text.split("\r\n"), 0, "line"), closedByServer: false });
      }, ms);
    });
    socket.on("end", () => {
      clearTimeout(timer);
      resolve({ status: nth(text.split("\r\n"), 0, "line"), closedByServer: true });
    });
    socket.on("error", () => {});
    socket.write(
      "POST /dline.v1.SystemService/Health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\n{}",
    );
  });
}

describe("nothing is done for a peer without the token", () => {
  attack("60 requests with 16 MB bodies and no token: no body is buffered, memory stays where it was", async () => {
    const { url, pid } = main.process.handshake;
    await main.clients.system.health({});
    const before = rssMb(pid);
    const answers: (number | string)[] = [];
    for (let round = 0; round < 6; round++)
      answers.push(...(await Promise.all(Array.from({ length: 10 }, () => postBig(url, 16 * 1024 * 1024)))));
    const after = rssMb(pid);
    console.log(
      `security: 60 unauthenticated 16 MB bodies: RSS ${before.toFixed(0)} -> ${after.toFixed(0)} MB; answers ${JSON.stringify([...new Set(answers)])}`,
    );
    check(
      "no unauthenticated request was served",
      answers.every((a) => a !== 200),
      JSON.stringify(answers.filter((a) => a === 200).length),
    );
    check(
      "RSS grew by less than 64 MB (the bodies were not kept)",
      after - before < 64,
      `${before.toFixed(0)} -> ${after.toFixed(0)} MB`,
    );
    const small = await fetch(`${url}/dline.v1.SystemService/Health`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    check("a small request without the token is answered 401 (control)", small.status === 401);
    check("the sidecar still serves the editor", (await main.clients.system.health({})).status === "ok");
  });

  attack(
    "a peer without the token cannot keep connections open: answered connections are closed, silent ones bounded",
    async () => {
      const port = Number(new URL(main.process.handshake.url).port);
      const answered = await rawRequestThenWait(port, 3_000);
      check("the request was answered 401", answered.status.includes("401"), answered.status);
      check("the server closed the connection after the 401", answered.closedByServer);
      // 100 connections that never send a byte: past the bound, the oldest are closed.
      const sockets: net.Socket[] = [];
      let closed = 0;
      for (let i = 0; i < 100; i++) {
        const s = net.connect({ host: "127.0.0.1", port });
        s.on("error", () => {});
        s.on("close", () => closed++);
        await new Promise((r) => s.once("connect", r));
        sockets.push(s);
      }
      check(
        "the connections beyond the bound were closed",
        await waitFor(() => closed >= 30, 5_000),
        `${closed} closed`,
      );
      check(
        "the editor is still served meanwhile",
        (await withDeadline(main.clients.system.health({}), 5_000))?.status === "ok",
      );
      for (const s of sockets) s.destroy();
    },
  );
});

describe("start-up and errors", () => {
  async function serveOn(socketPath: string): Promise<{ code: number | null; stderr: string }> {
    const roots = makeTestRoots("dline-sec-listen-");
    const child = spawn(sidecarBinary, ["serve", "--listen", `unix:${socketPath}`], {
      env: roots.env,
      cwd: roots.base,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    let stdout = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.stdout.on("data", (d) => {
      stdout += d;
      if (stdout.includes("\n")) child.stdin.end(); // it started: stop it
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
    fs.rmSync(roots.base, { recursive: true, force: true });
    return { code, stderr: stdout.includes('"ready"') ? `started; ${stderr}` : stderr };
  }

  attack("--listen unix:PATH on a regular file or a folder leaves it alone and refuses to start", async () => {
    const base = fs.mkdtempSync(path.join(main.roots.base, "listen-"));
    const file = path.join(base, "important.txt");
    fs.writeFileSync(file, "do not lose me\n");
    const onFile = await serveOn(file);
    check(
      "refused to start on a regular file",
      onFile.code !== 0 && !onFile.stderr.startsWith("started") && /not a socket/.test(onFile.stderr),
      `${onFile.code} ${onFile.stderr}`,
    );
    check("the file is intact", fs.lstatSync(file).isFile() && fs.readFileSync(file, "utf8") === "do not lose me\n");
    const dir = path.join(base, "folder");
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "inside.txt"), "x");
    const onDir = await serveOn(dir);
    check(
      "refused to start on a folder",
      onDir.code !== 0 && !onDir.stderr.startsWith("started"),
      `${onDir.code} ${onDir.stderr}`,
    );
    check("the folder is intact", fs.readFileSync(path.join(dir, "inside.txt"), "utf8") === "x");
    // Control: a stale socket left by a dead process is replaced.
    const stale = path.join(base, "stale.sock");
    // A process killed while listening leaves its socket file behind.
    spawnSync(process.execPath, [
      "-e",
      `require("net").createServer().listen(${JSON.stringify(stale)}, () => process.kill(process.pid, "SIGKILL"))`,
    ]);
    check("a stale socket is there (control)", fs.lstatSync(stale).isSocket());
    const onStale = await serveOn(stale);
    check(
      "a stale socket is replaced (control)",
      onStale.stderr.startsWith("started"),
      `${onStale.code} ${onStale.stderr}`,
    );
  });

  attack("an errno the core does not map is logged when it answers 'internal; see its log'", async () => {
    const roots = makeTestRoots("dline-sec-errno-");
    // A damaged data root: the global settings file is a folder (EISDIR on read).
    fs.mkdirSync(path.join(roots.dlineDir, "data", "settings", "settings.json"), { recursive: true });
    const sidecar = await startSidecar({ roots });
    sidecars.push(sidecar);
    let code = "ok";
    let message = "";
    try {
      await sidecar.clients.settings.getSettings({ scope: 1 });
    } catch (err) {
      code = String(ConnectError.from(err).code);
      message = ConnectError.from(err).rawMessage;
    }
    const { logFile } = await sidecar.clients.system.initialize({ clientName: "security" });
    check(
      "GetSettings answered internal, pointing at the log (control)",
      code === "13" && /see its log/.test(message),
      `${code} ${message}`,
    );
    await waitFor(() => fs.readFileSync(logFile, "utf8").includes("GetSettings"), 3_000);
    const logged = fs
      .readFileSync(logFile, "utf8")
      .split("\n")
      .filter((l) => l.includes("GetSettings"));
    check(
      "the log has the failure with its errno",
      logged.some((l) => l.includes("EISDIR")),
      logged.join("\n").slice(0, 300),
    );
  });
});
