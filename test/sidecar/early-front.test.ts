import * as net from "node:net";
import { describe, expect, it } from "vitest";
import { sidecarsStoppedAfterEach } from "../helpers/sidecar-per-test.js";

// Until a call needs node:http, the sidecar reads its connections itself and answers the plainest
// Initialize and Health calls from their bytes (core/src/server/early-front.ts); everything else
// is given to node:http with every byte the peer sent. These tests send raw requests as the first
// bytes a fresh sidecar reads, and again once node:http reads every connection, and hold the two
// answers to each other.

const start = sidecarsStoppedAfterEach();

interface RawAnswer {
  status: string;
  /** Lower-case names, in the order sent, without Date (it changes). */
  headers: string[];
  body: string;
}

interface Exchange {
  answers: RawAnswer[];
  /** Whether the sidecar closed the connection (within the wait). */
  closed: boolean;
}

/** Reads complete HTTP/1.1 answers (sized or chunked) from the start of `bytes`. */
function parseAnswers(bytes: Buffer): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let at = 0;
  for (;;) {
    const headEnd = bytes.indexOf("\r\n\r\n", at);
    if (headEnd < 0) return answers;
    const [status = "", ...lines] = bytes.toString("latin1", at, headEnd).split("\r\n");
    const headers = lines.filter((l) => !/^date:/i.test(l)).map((l) => l.toLowerCase());
    let bodyStart = headEnd + 4;
    let body: Buffer;
    const length = /^content-length: (\d+)$/m.exec(headers.join("\n"));
    if (status.startsWith("HTTP/1.1 100")) {
      answers.push({ status, headers, body: "" });
      at = bodyStart;
      continue;
    }
    if (length) {
      if (bytes.length < bodyStart + Number(length[1])) return answers;
      body = bytes.subarray(bodyStart, bodyStart + Number(length[1]));
      at = bodyStart + Number(length[1]);
    } else if (headers.includes("transfer-encoding: chunked")) {
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = bytes.indexOf("\r\n", bodyStart);
        if (lineEnd < 0) return answers;
        const size = parseInt(bytes.toString("latin1", bodyStart, lineEnd), 16);
        if (bytes.length < lineEnd + 2 + size + 2) return answers;
        parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
        bodyStart = lineEnd + 2 + size + 2;
        if (size === 0) break;
      }
      body = Buffer.concat(parts);
      at = bodyStart;
    } else {
      body = bytes.subarray(bodyStart);
      at = bytes.length;
    }
    answers.push({ status, headers, body: body.toString("latin1") });
  }
}

/**
 * Sends `writes` on a new connection (each after the answers before it when `answersBefore`
 * says so, or one byte at a time), then waits until `expected` answers came and `waitMs` more
 * passed, or the sidecar closed the connection.
 */
function exchange(
  url: string,
  writes: (string | Buffer)[],
  options: { expected: number; byteByByte?: boolean; pauseMs?: number; waitMs?: number },
): Promise<Exchange> {
  const port = Number(new URL(url).port);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    let received = Buffer.alloc(0);
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve({ answers: parseAnswers(received), closed });
    };
    socket.on("data", (d: Buffer) => {
      received = Buffer.concat([received, d]);
      if (parseAnswers(received).length >= options.expected) setTimeout(() => finish(false), options.waitMs ?? 150);
    });
    socket.on("close", () => finish(true));
    socket.on("error", () => finish(true));
    setTimeout(() => reject(new Error(`no answer in time; received ${received.toString("latin1")}`)), 15_000).unref();
    const send = async () => {
      for (const write of writes) {
        const bytes = Buffer.from(write);
        if (options.byteByByte) {
          for (const byte of bytes) {
            socket.write(Buffer.from([byte]));
            await new Promise((r) => setTimeout(r, 1));
          }
        } else socket.write(bytes);
        if (options.pauseMs) await new Promise((r) => setTimeout(r, options.pauseMs));
      }
    };
    socket.once("connect", () => void send());
  });
}

const INITIALIZE_BODY = JSON.stringify({ clientName: "raw", clientVersion: "1", workspaceRoots: ["/w/a"] });

function request(
  token: string,
  options: {
    method?: string;
    path?: string;
    version?: string;
    headers?: string[];
    body?: string;
    omit?: string[];
    eol?: string;
  } = {},
): string {
  const body = options.body ?? INITIALIZE_BODY;
  const eol = options.eol ?? "\r\n";
  const headers = [
    "Host: 127.0.0.1",
    "Content-Type: application/json",
    `Authorization: Bearer ${token}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...(options.headers ?? []),
  ].filter((h) => !options.omit?.some((name) => h.toLowerCase().startsWith(`${name}:`)));
  const line = `${options.method ?? "POST"} ${options.path ?? "/dline.v1.SystemService/Initialize"} HTTP/${options.version ?? "1.1"}`;
  return [line, ...headers].join(eol) + eol + eol + body;
}

function chunked(token: string): string {
  const head = request(token, { omit: ["content-length"], headers: ["Transfer-Encoding: chunked"], body: "" });
  const half = INITIALIZE_BODY.length >> 1;
  const chunk = (s: string) => `${s.length.toString(16)}\r\n${s}\r\n`;
  return head + chunk(INITIALIZE_BODY.slice(0, half)) + chunk(INITIALIZE_BODY.slice(half)) + "0\r\n\r\n";
}

type Case = {
  name: string;
  writes: (token: string) => (string | Buffer)[];
  expected: number;
  byteByByte?: boolean;
  pauseMs?: number;
};

const CASES: Case[] = [
  { name: "a keep-alive Initialize", writes: (t) => [request(t)], expected: 1 },
  {
    name: "Initialize with Connection: close",
    writes: (t) => [request(t, { headers: ["Connection: close"] })],
    expected: 1,
  },
  { name: "Initialize sent a byte at a time", writes: (t) => [request(t)], expected: 1, byteByByte: true },
  {
    name: "the head, then the body 100 ms later",
    writes: (t) => request(t).split(/(?<=\r\n\r\n)/),
    expected: 1,
    pauseMs: 100,
  },
  { name: "two pipelined calls in one write", writes: (t) => [request(t) + request(t)], expected: 2 },
  {
    name: "Initialize, then a call only connect answers, then Initialize, on one connection",
    writes: (t) => [request(t), request(t, { path: "/dline.v1.SettingsService/GetSettings", body: "{}" }), request(t)],
    expected: 3,
    pauseMs: 200,
  },
  { name: "a chunked body", writes: (t) => [chunked(t)], expected: 1 },
  { name: "HTTP/1.0", writes: (t) => [request(t, { version: "1.0" })], expected: 1 },
  { name: "no Host header", writes: (t) => [request(t, { omit: ["host"] })], expected: 1 },
  {
    name: "a 17 KiB header",
    writes: (t) => [request(t, { headers: [`X-Big: ${"a".repeat(17 * 1024)}`] })],
    expected: 1,
  },
  { name: "Expect: 100-continue", writes: (t) => [request(t, { headers: ["Expect: 100-continue"] })], expected: 2 },
  { name: "a wrong token", writes: () => [request("x".repeat(43))], expected: 1 },
  {
    name: "Content-Type given twice",
    writes: (t) => [request(t, { headers: ["Content-Type: text/plain"] })],
    expected: 1,
  },
  { name: "a folded header line", writes: (t) => [request(t, { headers: ["X-Folded: a", " b"] })], expected: 1 },
  { name: "bare LF line ends", writes: (t) => [request(t, { eol: "\n" })], expected: 1 },
  { name: "a GET", writes: (t) => [request(t, { method: "GET", body: "" })], expected: 1 },
  {
    name: "a body of 70 KiB",
    writes: (t) => [request(t, { body: `{"clientName":"${"n".repeat(70 * 1024)}"}` })],
    expected: 1,
  },
  {
    name: "a Health call",
    writes: (t) => [request(t, { path: "/dline.v1.SystemService/Health", body: "{}" })],
    expected: 1,
  },
];

/** Health's uptime and the sidecar's pid differ between two sidecars and two moments. */
function comparable(x: Exchange): Exchange {
  return {
    closed: x.closed,
    answers: x.answers.map((a) => ({
      ...a,
      headers: a.headers.map((h) =>
        h.startsWith("content-length:") && a.body.includes("uptimeMs") ? "content-length" : h,
      ),
      body: a.body
        .replace(/"uptimeMs":"\d+"/, '"uptimeMs":"N"')
        .replace(/"pid":\d+/, '"pid":N')
        .replace(/\/tmp\/[^"]+/g, "ROOT"),
    })),
  };
}

describe("the early front", () => {
  it.each(CASES)("answers $name as node:http does, when they are a fresh sidecar's first bytes", async (c) => {
    const s = await start();
    const { url, token } = s.process.handshake;
    const first = await exchange(url, c.writes(token), c);
    // A call only connect answers: from here on node:http reads every connection.
    await s.clients.settings.getSettings({});
    const later = await exchange(url, c.writes(token), c);
    expect(first.answers.length).toBe(c.expected);
    expect(comparable(first)).toEqual(comparable(later));
  });

  it("keeps answering on a connection it answered, and closes it only when asked", async () => {
    const s = await start();
    const { url, token } = s.process.handshake;
    const kept = await exchange(url, [request(token), request(token)], { expected: 2, pauseMs: 100 });
    expect(kept.answers.map((a) => a.status)).toEqual(["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"]);
    expect(kept.answers[0]!.headers).toContain("connection: keep-alive");
    expect(kept.closed).toBe(false);
    const closed = await exchange(url, [request(token, { headers: ["Connection: close"] })], {
      expected: 1,
      waitMs: 1_000,
    });
    expect(closed.answers[0]!.headers).toContain("connection: close");
    expect(closed.closed).toBe(true);
  });

  it("closes a connection whose request does not come whole within the headers timeout", async () => {
    const s = await start();
    const { url, token } = s.process.handshake;
    const socket = net.connect({ host: "127.0.0.1", port: Number(new URL(url).port) });
    socket.on("error", () => {});
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    await new Promise((r) => socket.once("connect", r));
    // Half a head, then a byte now and then, as a slow peer holding the connection would.
    socket.write(request(token).slice(0, 40));
    const drip = setInterval(() => socket.write("x"), 1_000);
    try {
      await closed;
    } finally {
      clearInterval(drip);
    }
    expect(socket.destroyed).toBe(true);
    // The sidecar still answers.
    expect((await s.clients.system.health({})).status).toBe("ok");
  }, 30_000);

  it("gives its open connections to node:http once a call needs it, between their requests", async () => {
    const s = await start();
    const { url, token } = s.process.handshake;
    const port = Number(new URL(url).port);
    // Open and answered by the front, then idle while another connection makes node:http load.
    const idle = net.connect({ host: "127.0.0.1", port });
    let received = "";
    idle.on("data", (d: Buffer) => (received += d.toString("latin1")));
    await new Promise((r) => idle.once("connect", r));
    idle.write(request(token));
    await expect.poll(() => parseAnswers(Buffer.from(received, "latin1")).length).toBe(1);
    await s.clients.settings.getSettings({});
    // A call on the idle connection that only connect answers (the front would have given it to node:http anyway),
    // and one the front would answer: both are now answered by node:http and connect.
    idle.write(request(token, { path: "/dline.v1.SettingsService/GetSettings", body: "{}" }));
    await expect.poll(() => parseAnswers(Buffer.from(received, "latin1")).length).toBe(2);
    idle.write(request(token));
    await expect.poll(() => parseAnswers(Buffer.from(received, "latin1")).length).toBe(3);
    const answers = parseAnswers(Buffer.from(received, "latin1"));
    expect(answers.map((a) => a.status)).toEqual(["HTTP/1.1 200 OK", "HTTP/1.1 200 OK", "HTTP/1.1 200 OK"]);
    expect(answers[2]!.body).toBe(answers[0]!.body);
    idle.destroy();
  });
});
