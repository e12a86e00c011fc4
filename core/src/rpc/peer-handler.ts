import type * as http from "node:http";
import { CheckpointService } from "../gen/dline/v1/checkpoint_pb.js";
import { TaskService } from "../gen/dline/v1/task_pb.js";
import type { Logger } from "../logging/logger.js";
import { authInterceptor } from "../server/auth.js";
import { bearerAuthorizer } from "../server/bearer.js";
import { connectHandler } from "../server/node-adapter.js";
import { checkpointService } from "./checkpoint-service.js";
import { errorInterceptor } from "./error-interceptor.js";
import { taskStorageMethods, type TaskStorageServiceDeps } from "./task-service.js";
import { taskRunMethods, type TaskRunServiceDeps } from "./task-run-service.js";
import type { CheckpointManager } from "../checkpoints/index.js";

export interface PeerHandlerDeps {
  tasks: TaskStorageServiceDeps["tasks"];
  runtime: TaskRunServiceDeps["runtime"];
  checkpoints: CheckpointManager;
  stopSignal: AbortSignal;
  logger: Logger;
}

/**
 * The handler of the peer endpoint: the calls another sidecar forwards about a task this one
 * runs (follow its events, read it, answer, send, cancel, resume, set its editor state and
 * profile, restore a checkpoint), served here as if this sidecar's own client had made them,
 * and never forwarded again. Nothing else is served; every call needs the peer token.
 */
export function createPeerHandler(deps: PeerHandlerDeps, token: string): http.RequestListener {
  const storage = taskStorageMethods({ tasks: deps.tasks });
  const run = taskRunMethods({ runtime: deps.runtime, storageGetTask: storage.getTask!, stopSignal: deps.stopSignal });
  const checkpoints = checkpointService(deps.checkpoints);
  return connectHandler({
    authorize: bearerAuthorizer(token),
    services: [
      {
        typeName: TaskService.typeName,
        load: async () => (router) =>
          router.service(TaskService, {
            getTask: run.getTask,
            subscribe: run.subscribe,
            sendMessage: run.sendMessage,
            respond: run.respond,
            cancel: run.cancel,
            resume: run.resume,
            updateEditorState: run.updateEditorState,
            setTaskProfile: run.setTaskProfile,
          }),
      },
      {
        typeName: CheckpointService.typeName,
        load: async () => (router) =>
          router.service(CheckpointService, { restore: checkpoints.restore, editMessage: checkpoints.editMessage }),
      },
    ],
    interceptors: [authInterceptor(token), errorInterceptor(deps.logger)],
    readMaxBytes: 16 * 1024 * 1024,
    writeMaxBytes: 64 * 1024 * 1024,
    onBrokenCall: (method, reason, clientGone) =>
      clientGone
        ? deps.logger.debug("the other sidecar went away during a forwarded call", { method })
        : deps.logger.warn("forwarded call ended without an answer", { method, error: (reason as Error)?.message }),
    onLoadFailed: (service, reason) =>
      deps.logger.error("cannot load a peer service", { service, error: (reason as Error)?.message }),
  });
}
