import type { ConnectRouter } from "@connectrpc/connect";
import { CheckpointService } from "../gen/dline/v1/checkpoint_pb.js";
import { HistoryService } from "../gen/dline/v1/history_pb.js";
import { ImportService } from "../gen/dline/v1/import_pb.js";
import { SettingsService } from "../gen/dline/v1/settings_pb.js";
import { SystemService } from "../gen/dline/v1/system_pb.js";
import { TaskService } from "../gen/dline/v1/task_pb.js";
import type { App } from "../app.js";
import { systemService } from "./system-service.js";

/**
 * Registers all six services. A method not implemented yet answers `unimplemented`
 * (connect-es fills in every method missing from a partial implementation).
 */
export function registerRoutes(router: ConnectRouter, app: App): void {
  router.service(
    SystemService,
    systemService({
      roots: app.roots,
      lifecycle: app.lifecycle,
      logger: app.logger.child("system"),
      logFile: app.logFile,
      startedAt: app.startedAt,
      gitVersion: app.gitVersion,
    }),
  );
  router.service(SettingsService, {});
  router.service(TaskService, {});
  router.service(HistoryService, {});
  router.service(CheckpointService, {});
  router.service(ImportService, {});
}
