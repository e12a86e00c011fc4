/** Helpers of the security checks: a counting `check`, a recording interceptor, raw HTTP calls, socket and file probes. */
import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { toJsonString } from "@bufbuild/protobuf";
import { ConnectError, type Code, type Interceptor } from "@connectrpc/connect";
import { expect, it } from "vitest";
import type { RunningSidecar } from "../helpers/sidecar.js";
import { nth } from "../helpers/items.js";

// Every check runs (soft assertions) and is counted; failures are listed at the end.
const tally = { checks: 0, failures: [] as string[] };
/** Values a failure message must never print (the secret; the sidecar's token once known). */
export const redactions: string[] = [];

export function check(label: string, ok: boolean, rawDetail = ""): void {
  let detail = rawDetail;
  for (const r of redactions) detail = detail.split(r).join("<redacted>");
  tally.checks++;
  if (!ok) tally.failures.push(detail ? `${label}: ${detail}` : label);
  expect.soft(ok, detail ? `${label}: ${detail}` : label).toBe(true);
}

// Attacks: one test each, named for the attack; it held when none of its checks failed.
const attacks = { tried: 0, held: 0 };

/** A test named for an attack; counted as held when it ends with none of its checks failed. */
export function attack(name: string, body: () => Promise<void>, timeout = 180_000): void {
  it(name, { timeout }, async () => {
    attacks.tried++;
    const failuresBefore = tally.failures.length;
    await body();
    if (tally.failures.length === failuresBefore) attacks.held++;
  });
}

/** "security attacks: N tried, H held" (the line CI shows for each attack file). */
export function attackLine(): string {
  return `security attacks: ${attacks.tried} tried, ${attacks.held} held`;
}

/** `promise`'s value, or undefined when it takes longer than `ms` (a hung call is a failed check, not a hung test). */
export async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Stops a sidecar; one that does not exit (a hung old build) is killed. */
export async function stopOrKill(sidecar: RunningSidecar): Promise<void> {
  if (sidecar.process.child.exitCode !== null || sidecar.process.child.signalCode !== null) return;
  const stopped = await withDeadline(sidecar.stop(), 10_000);
  if (stopped === undefined) {
    sidecar.process.child.kill("SIGKILL");
    await sidecar.process.exited;
  }
}

/** The file's summary line: "security: N checks, failures: F" and each failure. */
export function tallyLine(): string {
  return `security: ${tally.checks} checks, failures: ${tally.failures.length}${tally.failures.length ? `\n  ${tally.failures.join("\n  ")}` : ""}`;
}

/** Everything the sidecar answered through the recording clients, as JSON text, and every error message. */
export const seen: string[] = [];

/** Records every response message (unary and streamed) and every error of calls made through it. */
export const recorder: Interceptor = (next) => async (req) => {
  try {
    const res = await next(req);
    if (!res.stream) {
      seen.push(toJsonString(res.method.output, res.message as never));
      return res;
    }
    const messages = res.message;
    return {
      ...res,
      message: (async function* () {
        try {
          for await (const m of messages) {
            seen.push(toJsonString(res.method.output, m as never));
            yield m;
          }
        } catch (err) {
          seen.push(`${ConnectError.from(err).code} ${ConnectError.from(err).rawMessage}`);
          throw err;
        }
      })(),
    };
  } catch (err) {
    seen.push(`${ConnectError.from(err).code} ${ConnectError.from(err).rawMessage}`);
    throw err;
  }
};

export function unixCall(
  socketPath: string,
  urlPath: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { socketPath, path: urlPath, method: "POST", headers: { "Content-Type": "application/json", ...headers } },
      (res) => {
        let text = "";
        res.on("data", (c) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

export async function post(
  url: string,
  urlPath: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: string }> {
  const res = await fetch(`${url}/${urlPath}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body,
  });
  return { status: res.status, body: await res.text() };
}

export function codeOfBody(body: string): string {
  try {
    return (JSON.parse(body) as { code?: string }).code ?? "";
  } catch {
    return "";
  }
}

export async function errorCode(promise: Promise<unknown>): Promise<Code | "ok"> {
  try {
    await promise;
    return "ok";
  } catch (err) {
    return ConnectError.from(err).code;
  }
}

export function listeners(file: string, port: number): string[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols[3] === "0A")
    .map((cols) => nth(cols, 1, "column (the local address)").split(":"))
    .filter((address) => parseInt(nth(address, 1, "part of a local address (the port)"), 16) === port)
    .map((address) => nth(address, 0, "part of a local address (the host)"));
}

export function nonLoopbackAddresses(): { address: string; family: string }[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((a): a is os.NetworkInterfaceInfo => !!a && !a.internal && !a.address.startsWith("fe80"))
    .map((a) => ({ address: a.address, family: a.family }));
}

export function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 2000 });
    socket.once("connect", () => {
      socket.destroy();
      resolve("connected");
    });
    socket.once("timeout", () => {
      socket.destroy();
      resolve("timeout");
    });
    socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

export function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      const rel = path.relative(dir, full);
      if (e.isSymbolicLink()) out[rel] = `-> ${fs.readlinkSync(full)}`;
      else if (e.isDirectory()) {
        out[rel] = "dir";
        walk(full);
      } else out[rel] = fs.readFileSync(full, "utf8");
    }
  };
  walk(dir);
  return out;
}

export async function waitFor(cond: () => boolean, ms = 10_000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50)))
    if (cond()) return true;
  return cond();
}

export function filesUnder(dir: string, skip: (p: string) => boolean): string[] {
  if (!fs.existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, e.name);
    if (skip(full)) continue;
    if (e.isDirectory()) out.push(...filesUnder(full, skip));
    else if (e.isFile()) out.push(full);
  }
  return out;
}
