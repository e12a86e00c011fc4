import type { ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import {
  HealthResponseSchema,
  InitializeResponseSchema,
  ShutdownResponseSchema,
  type SystemService,
} from "../gen/dline/v1/system_pb.js";
import type { Lifecycle } from "../lifecycle.js";
import type { Logger } from "../logging/logger.js";
import type { StorageRoots } from "../storage/index.js";
import { PROTOCOL_VERSION, SERVER_VERSION } from "../version.js";

export interface SystemServiceDeps {
  roots: StorageRoots;
  lifecycle: Lifecycle;
  logger: Logger;
  logFile: string | undefined;
  startedAt: number;
  /** The system git's version, or "" when git is missing (memoised by the caller). */
  gitVersion: () => Promise<string>;
}

export function systemService(deps: SystemServiceDeps): Partial<ServiceImpl<typeof SystemService>> {
  return {
    async initialize(req) {
      deps.logger.info("client initialized", {
        client: req.clientName.slice(0, 100),
        clientVersion: req.clientVersion.slice(0, 50),
        workspaces: req.workspaceRoots.length,
      });
      return create(InitializeResponseSchema, {
        serverVersion: SERVER_VERSION,
        protocolVersion: PROTOCOL_VERSION,
        dataRoot: deps.roots.dataRoot,
        homeRoot: deps.roots.homeRoot,
        documentsRoot: deps.roots.documentsRoot,
        pid: process.pid,
        gitVersion: await deps.gitVersion(),
        logFile: deps.logFile ?? "",
      });
    },
    health() {
      return create(HealthResponseSchema, {
        status: deps.lifecycle.isStopping ? "stopping" : "ok",
        serverVersion: SERVER_VERSION,
        uptimeMs: BigInt(Date.now() - deps.startedAt),
        pid: process.pid,
      });
    },
    async shutdown(req) {
      // Flush, then answer; the process exits once the answer is written.
      await deps.lifecycle.stop(`Shutdown RPC${req.reason ? `: ${req.reason.slice(0, 200)}` : ""}`);
      return create(ShutdownResponseSchema, {});
    },
  };
}
