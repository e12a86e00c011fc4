import type { Lifecycle } from "../lifecycle.js";
import type { Logger } from "../logging/logger.js";
import type { StorageRoots } from "../storage/index.js";
import { PROTOCOL_VERSION, SERVER_VERSION } from "../version.js";

export interface SystemCallsDeps {
  /** Resolved while the sidecar starts (boot.ts); Initialize waits for them. */
  roots: Promise<StorageRoots>;
  lifecycle: Lifecycle;
  logger: Logger;
  logFile: string | undefined;
  startedAt: number;
  /** The system git's version, or "" when git is missing (memoised by the caller). */
  gitVersion: () => Promise<string>;
}

/** What Initialize is told, as plain values (dline.v1.InitializeRequest's fields). */
export interface InitializeQuestion {
  clientName: string;
  clientVersion: string;
  workspaceRoots: string[];
}

/** Initialize's answer, as plain values (dline.v1.InitializeResponse's fields). */
export interface InitializeAnswer {
  serverVersion: string;
  protocolVersion: number;
  dataRoot: string;
  homeRoot: string;
  documentsRoot: string;
  pid: number;
  gitVersion: string;
  logFile: string;
}

/** Health's answer, as plain values (dline.v1.HealthResponse's fields). */
export interface HealthAnswer {
  status: string;
  serverVersion: string;
  uptimeMs: bigint;
  pid: number;
}

/**
 * What SystemService's Initialize and Health answer, without protobuf or connect: the service
 * (system-service.ts) and the answers given while the services load (system-early.ts) both ask
 * this one object, so both give the same answers.
 */
export class SystemCalls {
  constructor(private readonly deps: SystemCallsDeps) {}

  async initialize(req: InitializeQuestion): Promise<InitializeAnswer> {
    // The roots first: when they cannot be found, nothing has happened yet.
    const roots = await this.deps.roots;
    this.deps.logger.info("client initialized", {
      client: req.clientName.slice(0, 100),
      clientVersion: req.clientVersion.slice(0, 50),
      workspaces: req.workspaceRoots.length,
    });
    return {
      serverVersion: SERVER_VERSION,
      protocolVersion: PROTOCOL_VERSION,
      dataRoot: roots.dataRoot,
      homeRoot: roots.homeRoot,
      documentsRoot: roots.documentsRoot,
      pid: process.pid,
      gitVersion: await this.deps.gitVersion(),
      logFile: this.deps.logFile ?? "",
    };
  }

  health(): HealthAnswer {
    return {
      status: this.deps.lifecycle.isStopping ? "stopping" : "ok",
      serverVersion: SERVER_VERSION,
      uptimeMs: BigInt(Date.now() - this.deps.startedAt),
      pid: process.pid,
    };
  }
}
