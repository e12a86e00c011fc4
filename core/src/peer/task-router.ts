import * as os from "node:os";
import { Code, ConnectError } from "@connectrpc/connect";
import { DlineError } from "../errors.js";
import type { Logger } from "../logging/logger.js";
import type { TaskOwnership } from "../tasks/index.js";
import type { PeerClients, PeerConnections } from "./peer-clients.js";
import type { PeerRegistry } from "./peer-registry.js";

/** Where a call about a task is served. */
export type TaskRoute =
  /** Here: this sidecar runs the task (`holder` is this process's pid), or nobody does (undefined). */
  | { kind: "here"; holder: number | undefined }
  /** Another live sidecar runs it and can be reached. */
  | { kind: "peer"; pid: number; clients: PeerClients }
  /** Another live sidecar runs it, and cannot be reached (`why`). */
  | { kind: "unreachable"; pid: number; why: string };

/** Pauses between attempts when the sidecar that runs a task refuses connections (it may be exiting). */
const REFUSED_RETRY_MS = [50, 200];

/**
 * Decides where calls about a task go: a task runs in exactly one sidecar (the one that holds
 * its claim, TaskOwnership), and any other sidecar asked about it forwards the call there, to
 * that sidecar's peer endpoint (found in the PeerRegistry). The owner applies a forwarded call
 * as if its own client had made it, so clients never need to know which sidecar runs a task.
 */
export class TaskRouter {
  constructor(
    private readonly deps: {
      ownership: () => Promise<TaskOwnership>;
      registry: PeerRegistry;
      connections: PeerConnections;
      logger: Logger;
    },
  ) {}

  /**
   * The process that holds the task for running it (this one included), or undefined when
   * none does. A deletion's claim does not count: the deletion ends the task's streams itself.
   */
  holder(ownership: TaskOwnership, taskId: string): number | undefined {
    const owner = ownership.owner(taskId);
    if (!owner || owner.purpose === "delete") return undefined;
    return ownership.holds(taskId) ? process.pid : owner.pid;
  }

  async route(taskId: string): Promise<TaskRoute> {
    const ownership = await this.deps.ownership();
    const owner = ownership.owner(taskId);
    if (!owner || owner.purpose === "delete") return { kind: "here", holder: undefined };
    if (ownership.holds(taskId) || owner.pid === process.pid) return { kind: "here", holder: process.pid };
    if (owner.hostname && owner.hostname !== os.hostname())
      return { kind: "unreachable", pid: owner.pid, why: "it runs on another machine" };
    const found = this.deps.registry.lookup(owner.pid);
    if (!found.entry) {
      this.deps.connections.forget(owner.pid);
      return { kind: "unreachable", pid: owner.pid, why: found.why };
    }
    return { kind: "peer", pid: owner.pid, clients: await this.deps.connections.for(found.entry) };
  }

  /**
   * Runs a call about a task where the task runs: `here` in this sidecar, `there` on the owner.
   * A refused connection reached nobody, so the owner is looked up again (it may have stopped,
   * and the task is then served here). An owner that cannot be reached is an error that says
   * so; the owner's own errors are passed on as it answered them.
   */
  async call<T>(taskId: string, here: () => Promise<T>, there: (peer: PeerClients) => Promise<T>): Promise<T> {
    let last: { pid: number; why: string } | undefined;
    for (let attempt = 0; ; attempt++) {
      const route = await this.route(taskId);
      if (route.kind === "here") return here();
      if (route.kind === "unreachable") throw unreachable(taskId, route.pid, route.why);
      if (last?.pid === route.pid) {
        if (attempt > REFUSED_RETRY_MS.length) throw unreachable(taskId, route.pid, last.why);
        await new Promise((resolve) => setTimeout(resolve, REFUSED_RETRY_MS[attempt - 1]));
      }
      try {
        return await there(route.clients);
      } catch (err) {
        const failure = transportFailure(err);
        if (!failure) throw relayed(err);
        this.deps.connections.forget(route.pid);
        if (failure === "broken") {
          throw new DlineError(
            "unavailable",
            `Task ${taskId}: the Dline window running it (pid ${route.pid}) stopped answering during the call; look at the task before trying again.`,
          );
        }
        if (failure === "rejected") throw unreachable(taskId, route.pid, "it did not accept this window's call");
        last = { pid: route.pid, why: "it refused the connection" };
        this.deps.logger.debug("a peer refused a forwarded call", { taskId, peerPid: route.pid });
      }
    }
  }
}

export function unreachable(taskId: string, pid: number, why: string): DlineError {
  return new DlineError(
    "failed_precondition",
    `Task ${taskId} is running in another Dline window (pid ${pid}), which cannot be reached: ${why}.`,
  );
}

/**
 * How a forwarded call failed in transport, if it did: "refused" (nothing reached the owner: safe
 * to try again), "broken" (the connection dropped mid-call: the owner may have applied it),
 * "rejected" (the owner refused this sidecar's credentials or does not serve the method: an
 * older version, or another process under a reused pid). Undefined: the owner answered.
 */
function transportFailure(err: unknown): "refused" | "broken" | "rejected" | undefined {
  if (!(err instanceof ConnectError)) return undefined;
  if (err.code === Code.Unauthenticated || err.code === Code.Unimplemented) return "rejected";
  if (err.isWireError) return undefined;
  const cause = (err.cause as NodeJS.ErrnoException | undefined)?.code;
  if (cause === "ECONNREFUSED" || cause === "ENOENT") return "refused";
  if (
    err.code === Code.Unavailable ||
    err.code === Code.Aborted ||
    err.code === Code.Internal ||
    err.code === Code.Unknown
  )
    return "broken";
  return undefined;
}

/**
 * The owner's error, as the client of this sidecar receives it: its code, sentence and details,
 * without the owner's response headers (which belong to the peer connection, not to this call).
 */
export function relayed(err: unknown): unknown {
  if (!(err instanceof ConnectError)) return err;
  const clean = new ConnectError(err.rawMessage, err.code);
  clean.details.push(...err.details);
  return clean;
}
