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
  type TaskService,
} from "../gen/dline/v1/task_pb.js";
import type { EditorFiles } from "../agent/environment-details.js";
import { DlineError } from "../errors.js";
import type { TaskRuntime } from "../runtime/task-runtime.js";
import { statusToProto, uiMessageToProto } from "./task-mapping.js";

export interface TaskRunServiceDeps {
  /** The runtime, built once the task storage is open. */
  runtime: () => Promise<TaskRuntime>;
  /** GetTask of the task store; the runtime adds the live parts (last seq, pending ask). */
  storageGetTask: NonNullable<Partial<ServiceImpl<typeof TaskService>>["getTask"]>;
  /** Ends every stream when the sidecar stops. */
  stopSignal: AbortSignal;
}

function required(value: string, field: string): string {
  if (!value) throw new DlineError("invalid_argument", `${field} is required.`);
  return value;
}

/** What a client reported of its editor (undefined when it reported nothing). */
function editorFiles(editor: EditorState | undefined): EditorFiles | undefined {
  if (!editor) return undefined;
  return { visibleFiles: editor.visibleFiles.slice(0, 500), openFiles: editor.openFiles.slice(0, 500), unsavedFiles: editor.unsavedFiles.slice(0, 500) };
}

/** The running side of TaskService: NewTask, Subscribe, SendMessage, Respond, Cancel, Resume. */
export function taskRunMethods(deps: TaskRunServiceDeps): Partial<ServiceImpl<typeof TaskService>> {
  return {
    async getTask(req, ctx) {
      const res = await deps.storageGetTask(req, ctx);
      const runtime = await deps.runtime();
      // A task loaded here: messages, status and last seq from one consistent view.
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
      const live = runtime.liveView(req.taskId);
      if (!live) {
        res.lastSeq = runtime.storedLastSeq(req.taskId);
        return res;
      }
      res.lastSeq = live.lastSeq;
      res.messages = live.messages.map((m) => uiMessageToProto(m, { stopped: live.stopped }));
      res.pendingAsk = live.pendingAsk;
      if (res.task) res.task.status = statusToProto[live.status];
      return res;
    },
    async newTask(req) {
      const taskId = await (await deps.runtime()).newTask(required(req.workspaceRoot, "workspace_root"), req.text, req.profileId, { editor: editorFiles(req.editor) });
      return create(NewTaskResponseSchema, { taskId });
    },
    async *subscribe(req, ctx: HandlerContext) {
      const signal = AbortSignal.any([ctx.signal, deps.stopSignal]);
      for await (const event of (await deps.runtime()).subscribe(required(req.taskId, "task_id"), req.afterSeq, signal)) {
        yield create(SubscribeResponseSchema, { event });
      }
    },
    async sendMessage(req) {
      await (await deps.runtime()).sendMessage(required(req.taskId, "task_id"), req.text, { workspaceRoot: req.workspaceRoot || undefined, editor: editorFiles(req.editor) });
      return create(SendMessageResponseSchema, {});
    },
    async respond(req) {
      (await deps.runtime()).respond(required(req.taskId, "task_id"), required(req.askId, "ask_id"), req.approve, req.text);
      return create(RespondResponseSchema, {});
    },
    async updateEditorState(req) {
      (await deps.runtime()).setUnsavedInEditor(required(req.taskId, "task_id"), req.editor?.unsavedFiles ?? []);
      return create(UpdateEditorStateResponseSchema, {});
    },
    async cancel(req) {
      await (await deps.runtime()).cancel(required(req.taskId, "task_id"));
      return create(CancelResponseSchema, {});
    },
    async setTaskProfile(req) {
      await (await deps.runtime()).setTaskProfile(required(req.taskId, "task_id"), req.profileId);
      return create(SetTaskProfileResponseSchema, {});
    },
    async resume(req) {
      await (await deps.runtime()).resume(required(req.taskId, "task_id"), { workspaceRoot: req.workspaceRoot || undefined });
      return create(ResumeResponseSchema, {});
    },
  };
}
