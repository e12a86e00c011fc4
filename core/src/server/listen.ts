import * as fs from "node:fs";
import * as net from "node:net";
import { DlineError } from "../errors.js";

export type ListenTarget = { kind: "tcp"; host: string; port: number } | { kind: "unix"; path: string };

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "::1", "localhost"]);

/** What the server needs of `net.BoundSocket` (Node 24's, not in the machine Node's types). */
type BoundSocketConstructor = new (options: { host: string; port: number }) => object;

/**
 * `net.BoundSocket` binds a numeric address at once, without the host lookup `listen(port, host)`
 * does: node:dns, a lookup, and Node's IPv6 check of the address, whose first use compiles a
 * long regular expression (3-4 ms of start-up). Undefined on a Node without it (the machine's
 * Node, which runs the sources in tests), which listens on the host as before.
 */
const BoundSocket = (net as unknown as { BoundSocket?: BoundSocketConstructor }).BoundSocket;

/** Parses `--listen`: `127.0.0.1:0`, `[::1]:0`, `localhost:PORT` or `unix:PATH`. Loopback only. */
export function parseListen(value: string): ListenTarget {
  if (value.startsWith("unix:")) {
    const socketPath = value.slice("unix:".length);
    if (!socketPath) throw new DlineError("invalid_argument", "--listen unix: needs a socket path.");
    return { kind: "unix", path: socketPath };
  }
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
  if (!match) throw new DlineError("invalid_argument", `--listen ${value}: expected HOST:PORT or unix:PATH.`);
  const host = match[1] ?? match[2] ?? "";
  const port = Number(match[3]);
  if (!LOOPBACK_HOSTS.has(host)) {
    throw new DlineError("invalid_argument", `--listen ${value}: the sidecar binds loopback only (127.0.0.1 or ::1).`);
  }
  if (port > 65535) throw new DlineError("invalid_argument", `--listen ${value}: port out of range.`);
  return { kind: "tcp", host: host === "localhost" ? "127.0.0.1" : host, port };
}

/**
 * Binds the server and answers the URL clients use. A Unix socket is created with umask 077
 * so that it is 0600 from the first moment (no window where another user could connect),
 * and chmod'ed again to be sure. A stale socket file from a dead sidecar is replaced only
 * when nothing answers on it.
 */
export async function listen(server: net.Server, target: ListenTarget): Promise<string> {
  if (target.kind === "tcp") {
    const bound = BoundSocket ? bindNow(BoundSocket, target) : undefined;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      if (bound) server.listen(bound, () => resolve());
      else server.listen(target.port, target.host, () => resolve());
    });
    const address = server.address() as net.AddressInfo;
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  }
  await removeStaleSocket(target.path);
  const previousMask = process.umask(0o077);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(target.path, () => resolve());
    });
  } finally {
    process.umask(previousMask);
  }
  fs.chmodSync(target.path, 0o600);
  return `unix:${target.path}`;
}

/** Binds the address now; a port already taken is said as plainly as `listen` says it. */
function bindNow(Bound: BoundSocketConstructor, target: { host: string; port: number }): object {
  try {
    return new Bound({ host: target.host, port: target.port });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
    const address = target.host.includes(":") ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
    throw new DlineError("already_exists", `Cannot listen on ${address}: the address is already in use.`, {
      cause: err,
    });
  }
}

/**
 * Makes room for the socket: a socket file nobody answers on (left by a dead sidecar) is
 * removed; anything else at the path (a regular file, a folder, a link) is never touched.
 */
async function removeStaleSocket(socketPath: string): Promise<void> {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(socketPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw err;
  }
  if (!stat.isSocket()) {
    throw new DlineError(
      "already_exists",
      `--listen unix:${socketPath}: the path exists and is not a socket; it was left untouched. Choose another path.`,
    );
  }
  const alive = await new Promise<boolean>((resolve) => {
    const probe = net.connect(socketPath);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
  if (alive) throw new DlineError("already_exists", `Another process is listening on ${socketPath}.`);
  // Still the socket we probed (not replaced meanwhile by something else): remove it.
  if (fs.lstatSync(socketPath).isSocket()) fs.unlinkSync(socketPath);
}
