import type { Client } from "@connectrpc/connect";
import type { CheckpointService } from "../gen/dline/v1/checkpoint_pb.js";
import type { TaskService } from "../gen/dline/v1/task_pb.js";
import type { PeerEntry } from "./peer-registry.js";

/** The calls one sidecar forwards to another: a task's and its checkpoints'. */
export interface PeerClients {
  pid: number;
  tasks: Client<typeof TaskService>;
  checkpoints: Client<typeof CheckpointService>;
}

/**
 * Clients of the peer endpoints this sidecar forwards to, one per running peer (kept alive
 * connections: a forwarded call costs a loopback round trip, not a connection). A peer that
 * restarted under the same pid has another start time, so it gets new clients. The client
 * modules (connect-node's, which load node:zlib) load with the first forwarded call, not with
 * the sidecar's first domain call.
 */
export class PeerConnections {
  private readonly byPid = new Map<number, { key: string; clients: PeerClients }>();

  async for(entry: PeerEntry): Promise<PeerClients> {
    const key = `${entry.startedAt}|${entry.url}`;
    const known = this.byPid.get(entry.pid);
    if (known?.key === key) return known.clients;
    const [{ createClient }, { sidecarTransport }, { CheckpointService }, { TaskService }] = await Promise.all([
      import("@connectrpc/connect"),
      import("../client/clients.js"),
      import("../gen/dline/v1/checkpoint_pb.js"),
      import("../gen/dline/v1/task_pb.js"),
    ]);
    const transport = sidecarTransport(entry.url, entry.token);
    const clients = {
      pid: entry.pid,
      tasks: createClient(TaskService, transport),
      checkpoints: createClient(CheckpointService, transport),
    };
    this.byPid.set(entry.pid, { key, clients });
    return clients;
  }

  /** Drops the clients of a peer that stopped. */
  forget(pid: number): void {
    this.byPid.delete(pid);
  }
}
