import type { ConnectRouter } from "@connectrpc/connect";
import type { Base } from "../boot.js";
import { SystemService } from "../gen/dline/v1/system_pb.js";
import { gitVersionProbe } from "../git-version.js";
import { systemService } from "./system-service.js";

/** SystemService needs only what the sidecar starts with: it answers before any domain module loads. */
export function registerSystemService(router: ConnectRouter, base: Base): void {
  router.service(
    SystemService,
    systemService({
      roots: base.roots,
      lifecycle: base.lifecycle,
      logger: base.logger.child("system"),
      logFile: base.logFile,
      startedAt: base.startedAt,
      gitVersion: gitVersionProbe(base.env),
    }),
  );
}
