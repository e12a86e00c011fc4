import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import {
  CancelResponseSchema,
  NewTaskResponseSchema,
  RespondResponseSchema,
  ResumeResponseSchema,
  SendMessageResponseSchema,
  SetTaskProfileResponseSchema,
  SubscribeResponseSchema,
  UpdateEditorStateResponseSchema,
  type EditorState,
  type TaskEvent,
  type TaskService,
} from "../gen/dline/v1/task_pb.js";
import type { EditorFiles } from "../agent/index.js";
import { DlineError } from "../errors.js";
import type { Logger } from "../logging/logger.js";
import type { PeerClients } from "../peer/peer-clients.js";
import { followTask } from "../peer/task-follower.js";
import type { TaskRouter } from "../peer/task-router.js";
import type { TaskRuntime } from "../runtime/index.js";
import type { TaskOwnership } from "../tasks/index.js";
import { fitMessagesToAnswer } from "./answer-budget.js";
import { askToProto, statusToProto, taskEventsToProto, uiMessageToProto } from "./task-mapping.js";

/** What serving tasks that other sidecars run needs (absent: every call is served here). */
export interface TaskForwarding {
  router: TaskRouter;
  ownership: () => Promise<TaskOwnership>;
  /** Whether the task's folder still exists (a follower's stream ends when it is deleted). */
  taskExists(taskId: string): boolean;
  logger: Logger;
}

export interface TaskRunServiceDeps {
  /** The runtime, built once the task storage is open. */
  runtime: () => Promise<TaskRuntime>;
  /** GetTask of the task store; the runtime adds the live parts (last seq, pending ask). */
  storageGetTask: NonNullable<Partial<ServiceImpl<typeof TaskService>>["getTask"]>;
  /** Ends every stream when the sidecar stops. */
  stopSignal: AbortSignal;
  /**
   * Calls about a task another sidecar runs go to that sidecar (its peer endpoint), which
   * applies them as if its own client had sent them. The peer endpoint itself has none.
   */
  forwarding?: TaskForwarding;
}

function required(value: string, field: string): string {
  if (!value) throw new DlineError("invalid_argument", `${field} is required.`);
  return value;
}

/** What a client reported of its editor (undefined when it reported nothing). */
function editorFiles(editor: EditorState | undefined): EditorFiles | undefined {
  if (!editor) return undefined;
  return {
    visibleFiles: editor.visibleFiles.slice(0, 500),
    openFiles: editor.openFiles.slice(0, 500),
    unsavedFiles: editor.unsavedFiles.slice(0, 500),
  };
}

/** The running side of TaskService: NewTask, Subscribe, SendMessage, Respond, Cancel, Resume, and a task's editor state and profile. */
export function taskRunMethods(deps: TaskRunServiceDeps): Partial<ServiceImpl<typeof TaskService>> {
  const { forwarding } = deps;
  /** `here` in this sidecar, or `there` on the sidecar that runs the task. */
  const routed = <T>(taskId: string, here: () => Promise<T>, there: (peer: PeerClients) => Promise<T>) =>
    forwarding ? forwarding.router.call(taskId, here, there) : here();

  const localGetTask: typeof deps.storageGetTask = async (req, ctx) => {
    const res = await deps.storageGetTask(req, ctx);
    const runtime = await deps.runtime();
    try {
      res.profileId = runtime.profileOf(req.taskId);
    } catch {
      // An unreadable state.json: GetTask reports the task (damaged) without its profile.
    }
    const context = runtime.contextOf(req.taskId);
    if (context) {
      res.contextTokens = BigInt(context.tokens);
      res.contextWindow = BigInt(context.window);
    }
    // A task loaded here: messages, status and last seq from one consistent view.
    const live = runtime.liveView(req.taskId);
    if (!live) {
      const stored = runtime.storedView(req.taskId);
      res.lastSeq = stored.lastSeq;
      res.statusReason = stored.statusReason;
      return res;
    }
    res.lastSeq = live.lastSeq;
    res.statusReason = live.statusReason;
    const messages = live.messages.map((m) => uiMessageToProto(m, { stopped: live.stopped }));
    fitMessagesToAnswer(messages);
    res.messages = messages;
    res.pendingAsk = live.pendingAsk ? askToProto(live.pendingAsk) : undefined;
    if (res.task) res.task.status = statusToProto[live.status];
    return res;
  };

  return {
    async getTask(req, ctx) {
      if (!forwarding || !req.taskId) return localGetTask(req, ctx);
      // The owner's view: its messages, pending question and last seq, taken together. When
      // the owner cannot answer, the stored view is still the truth of what is on disk.
      const route = await forwarding.router.route(req.taskId);
      if (route.kind === "peer") {
        try {
          return await route.clients.tasks.getTask(req, { signal: ctx.signal });
        } catch (err) {
          forwarding.logger.debug("the sidecar running a task did not answer GetTask; the stored view is served", {
            taskId: req.taskId,
            pid: route.pid,
            error: (err as Error).message,
          });
        }
      }
      return localGetTask(req, ctx);
    },
    async newTask(req) {
      const taskId = await (
        await deps.runtime()
      ).newTask(required(req.workspaceRoot, "workspace_root"), req.text, req.profileId, {
        editor: editorFiles(req.editor),
      });
      return create(NewTaskResponseSchema, { taskId });
    },
    async *subscribe(req, ctx: HandlerContext) {
      const taskId = required(req.taskId, "task_id");
      const signal = AbortSignal.any([ctx.signal, deps.stopSignal]);
      const runtime = await deps.runtime();
      let events: AsyncIterable<TaskEvent>;
      if (forwarding) {
        events = followTask(taskId, req.afterSeq, signal, {
          router: forwarding.router,
          ownership: await forwarding.ownership(),
          local: (afterSeq, legSignal) => taskEventsToProto(runtime.subscribe(taskId, afterSeq, legSignal)),
          localLastSeq: () => runtime.loadedLastSeq(taskId),
          exists: () => forwarding.taskExists(taskId),
          localIsStale: () => runtime.loadedCopyIsStale(taskId),
          logger: forwarding.logger,
        });
      } else {
        events = taskEventsToProto(runtime.subscribe(taskId, req.afterSeq, signal));
      }
      for await (const event of events) yield create(SubscribeResponseSchema, { event });
    },
    async sendMessage(req, ctx) {
      const taskId = required(req.taskId, "task_id");
      return routed(
        taskId,
        async () => {
          await (
            await deps.runtime()
          ).sendMessage(taskId, req.text, {
            workspaceRoot: req.workspaceRoot || undefined,
            editor: editorFiles(req.editor),
          });
          return create(SendMessageResponseSchema, {});
        },
        (peer) => peer.tasks.sendMessage(req, { signal: ctx.signal }),
      );
    },
    async respond(req, ctx) {
      const taskId = required(req.taskId, "task_id");
      const askId = required(req.askId, "ask_id");
      return routed(
        taskId,
        async () => {
          (await deps.runtime()).respond(taskId, askId, req.approve, req.text);
          return create(RespondResponseSchema, {});
        },
        (peer) => peer.tasks.respond(req, { signal: ctx.signal }),
      );
    },
    async updateEditorState(req, ctx) {
      const taskId = required(req.taskId, "task_id");
      return routed(
        taskId,
        async () => {
          (await deps.runtime()).setUnsavedInEditor(taskId, req.editor?.unsavedFiles ?? []);
          return create(UpdateEditorStateResponseSchema, {});
        },
        (peer) => peer.tasks.updateEditorState(req, { signal: ctx.signal }),
      );
    },
    async cancel(req, ctx) {
      const taskId = required(req.taskId, "task_id");
      return routed(
        taskId,
        async () => {
          await (await deps.runtime()).cancel(taskId);
          return create(CancelResponseSchema, {});
        },
        (peer) => peer.tasks.cancel(req, { signal: ctx.signal }),
      );
    },
    async setTaskProfile(req, ctx) {
      const taskId = required(req.taskId, "task_id");
      return routed(
        taskId,
        async () => {
          await (await deps.runtime()).setTaskProfile(taskId, req.profileId);
          return create(SetTaskProfileResponseSchema, {});
        },
        (peer) => peer.tasks.setTaskProfile(req, { signal: ctx.signal }),
      );
    },
    async resume(req, ctx) {
      const taskId = required(req.taskId, "task_id");
      return routed(
        taskId,
        async () => {
          await (await deps.runtime()).resume(taskId, { workspaceRoot: req.workspaceRoot || undefined });
          return create(ResumeResponseSchema, {});
        },
        (peer) => peer.tasks.resume(req, { signal: ctx.signal }),
      );
    },
  };
}
