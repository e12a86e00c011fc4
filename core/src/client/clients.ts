import { createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { unaryTransport } from "./unary-transport.js";
import { CheckpointService } from "../gen/dline/v1/checkpoint_pb.js";
import { HistoryService } from "../gen/dline/v1/history_pb.js";
import { ImportService } from "../gen/dline/v1/import_pb.js";
import { SettingsService } from "../gen/dline/v1/settings_pb.js";
import { SystemService } from "../gen/dline/v1/system_pb.js";
import { TaskService } from "../gen/dline/v1/task_pb.js";

export interface DlineClients {
  system: Client<typeof SystemService>;
  settings: Client<typeof SettingsService>;
  tasks: Client<typeof TaskService>;
  history: Client<typeof HistoryService>;
  checkpoints: Client<typeof CheckpointService>;
  imports: Client<typeof ImportService>;
  transport: Transport;
}

export function bearerInterceptor(token: string): Interceptor {
  return (next) => (req) => {
    req.header.set("Authorization", `Bearer ${token}`);
    return next(req);
  };
}

/**
 * A transport to a sidecar: Connect over HTTP/1.1 with binary protobuf (JSON when `json` is
 * set), the bearer token on every call. A `unix:PATH` url goes through the socket.
 */
export interface ClientOptions {
  /** Connect JSON instead of binary protobuf. */
  json?: boolean;
  /** Interceptors run after the bearer token is set (e.g. to record answers). */
  interceptors?: Interceptor[];
}

export function sidecarTransport(url: string, token: string, options: ClientOptions = {}): Transport {
  const unix = url.startsWith("unix:") ? url.slice("unix:".length) : undefined;
  const baseUrl = unix ? "http://localhost" : url;
  const useBinaryFormat = !options.json;
  const interceptors = [bearerInterceptor(token), ...(options.interceptors ?? [])];
  const connect = createConnectTransport({
    baseUrl,
    httpVersion: "1.1",
    useBinaryFormat,
    interceptors,
    nodeOptions: unix ? { socketPath: unix } : undefined,
  });
  return unaryTransport({ baseUrl, socketPath: unix, useBinaryFormat, interceptors, fallback: connect });
}

export function createDlineClients(url: string, token: string, options: ClientOptions = {}): DlineClients {
  const transport = sidecarTransport(url, token, options);
  return {
    system: createClient(SystemService, transport),
    settings: createClient(SettingsService, transport),
    tasks: createClient(TaskService, transport),
    history: createClient(HistoryService, transport),
    checkpoints: createClient(CheckpointService, transport),
    imports: createClient(ImportService, transport),
    transport,
  };
}
