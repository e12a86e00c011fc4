import * as fs from "node:fs";
import type { ConnectRouter } from "@connectrpc/connect";
import { CheckpointService } from "../gen/dline/v1/checkpoint_pb.js";
import { HistoryService } from "../gen/dline/v1/history_pb.js";
import { ImportService } from "../gen/dline/v1/import_pb.js";
import { SettingsService } from "../gen/dline/v1/settings_pb.js";
import { TaskService } from "../gen/dline/v1/task_pb.js";
import type { App } from "../app.js";
import { settingsService } from "./settings-service.js";
import { capabilitiesMethods } from "./capabilities-service.js";
import { checkpointService } from "./checkpoint-service.js";
import { historyService } from "./history-service.js";
import { taskStorageMethods } from "./task-service.js";
import { taskRunMethods } from "./task-run-service.js";
import { importService } from "./import-service.js";

/**
 * The services built from the App's domain modules, by name (SystemService needs none of them:
 * system-routes.ts). A method missing from an implementation would answer `unimplemented`;
 * test/sidecar checks that none is.
 */
export const appRoutes: Record<string, (router: ConnectRouter, app: App) => void> = {
  [SettingsService.typeName]: (router, app) => {
    const settingsMethods = settingsService({
      settings: app.settings,
      lifecycle: app.lifecycle,
      logger: app.logger.child("settings"),
    });
    router.service(SettingsService, { ...settingsMethods, ...capabilitiesMethods(app.capabilities, settingsMethods) });
  },
  [TaskService.typeName]: (router, app) => {
    const storageMethods = taskStorageMethods({ tasks: app.tasks });
    const forwarding = {
      router: app.taskRouter,
      ownership: async () => (await app.tasks()).ownership,
      taskExists: (taskId: string) => fs.existsSync(app.layout.task(taskId).dir),
      logger: app.logger.child("peers"),
    };
    router.service(TaskService, {
      ...storageMethods,
      ...taskRunMethods({
        runtime: app.runtime,
        storageGetTask: storageMethods.getTask!,
        stopSignal: app.lifecycle.signal,
        forwarding,
      }),
    });
  },
  [HistoryService.typeName]: (router, app) => {
    router.service(HistoryService, historyService({ tasks: app.tasks, stopSignal: app.lifecycle.signal }));
  },
  [CheckpointService.typeName]: (router, app) => {
    router.service(CheckpointService, checkpointService(app.checkpoints, app.taskRouter));
  },
  [ImportService.typeName]: (router, app) => {
    router.service(ImportService, importService(app.clineImporter));
  },
};
