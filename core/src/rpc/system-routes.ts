import type { ConnectRouter } from "@connectrpc/connect";
import type { Base } from "../boot.js";
import { SystemService } from "../gen/dline/v1/system_pb.js";
import type { SystemCalls } from "./system-calls.js";
import { systemService } from "./system-service.js";

/** SystemService needs only what the sidecar starts with: it answers before any domain module loads. */
export function registerSystemService(router: ConnectRouter, base: Base, calls: SystemCalls): void {
  router.service(SystemService, systemService({ calls, lifecycle: base.lifecycle }));
}
