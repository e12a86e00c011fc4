import type { ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import {
  HealthResponseSchema,
  InitializeResponseSchema,
  ShutdownResponseSchema,
  type SystemService,
} from "../gen/dline/v1/system_pb.js";
import type { Lifecycle } from "../lifecycle.js";
import type { SystemCalls } from "./system-calls.js";

export interface SystemServiceDeps {
  calls: SystemCalls;
  lifecycle: Lifecycle;
}

export function systemService(deps: SystemServiceDeps): Partial<ServiceImpl<typeof SystemService>> {
  return {
    async initialize(req) {
      return create(InitializeResponseSchema, await deps.calls.initialize(req));
    },
    health() {
      return create(HealthResponseSchema, deps.calls.health());
    },
    async shutdown(req) {
      // Flush, then answer; the process exits once the answer is written.
      await deps.lifecycle.stop(`Shutdown RPC${req.reason ? `: ${req.reason.slice(0, 200)}` : ""}`);
      return create(ShutdownResponseSchema, {});
    },
  };
}
