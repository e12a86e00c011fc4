package dev.dline.client

import dline.v1.Task.CancelRequest
import dline.v1.Task.DeleteTasksRequest
import dline.v1.Task.GetTaskRequest
import dline.v1.Task.NewTaskRequest
import dline.v1.Task.RespondRequest
import dline.v1.Task.ResumeRequest
import dline.v1.Task.SendMessageRequest
import dline.v1.Task.SubscribeRequest
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.map

/** TaskService: start and drive tasks; their events arrive through [subscribe]. */
class TaskApi internal constructor(private val source: ConnectionSource) {
    /** Starts a task in [workspaceRoot]; an empty [profileId] means the configured default. Returns its id. */
    suspend fun newTask(workspaceRoot: String, text: String, profileId: String = ""): String = source.unary {
        tasks.newTask(
            NewTaskRequest.newBuilder().setWorkspaceRoot(workspaceRoot).setText(text).setProfileId(profileId).build(),
            emptyMap(),
        )
    }.taskId

    /**
     * Every event of the task after [afterSeq] (0: from the start), then live ones, in seq order.
     * Survives sidecar restarts: it resumes with the last seq delivered, without loss or
     * duplicates. Cancel the collecting coroutine to stop.
     */
    fun subscribe(taskId: String, afterSeq: Long = 0): Flow<TaskEvent> = source.resumableStream(
        startAfter = afterSeq,
        open = { tasks.subscribe(emptyMap()) },
        request = { after -> SubscribeRequest.newBuilder().setTaskId(taskId).setAfterSeq(after).build() },
        seqOf = { it.event.seq },
        dropSeen = true,
    ).map { it.event }

    /**
     * The user's next message. [workspaceRoot]: the folder to continue in, for a task that has
     * none (imported without one) or whose folder is not on this machine; "" otherwise.
     */
    suspend fun sendMessage(taskId: String, text: String, workspaceRoot: String = "") {
        source.unary {
            tasks.sendMessage(
                SendMessageRequest.newBuilder().setTaskId(taskId).setText(text).setWorkspaceRoot(workspaceRoot).build(),
                emptyMap(),
            )
        }
    }

    /** Answers the pending ask [askId]: approve or deny a tool, or answer a follow-up with [text]. */
    suspend fun respond(taskId: String, askId: String, approve: Boolean, text: String = "") {
        source.unary {
            tasks.respond(
                RespondRequest.newBuilder().setTaskId(taskId).setAskId(askId).setApprove(approve).setText(text).build(),
                emptyMap(),
            )
        }
    }

    suspend fun cancel(taskId: String) {
        source.unary { tasks.cancel(CancelRequest.newBuilder().setTaskId(taskId).build(), emptyMap()) }
    }

    /** Continues an interrupted task; [workspaceRoot] as in [sendMessage]. */
    suspend fun resume(taskId: String, workspaceRoot: String = "") {
        source.unary { tasks.resume(ResumeRequest.newBuilder().setTaskId(taskId).setWorkspaceRoot(workspaceRoot).build(), emptyMap()) }
    }

    suspend fun get(taskId: String): GetTaskResponse =
        source.unary { tasks.getTask(GetTaskRequest.newBuilder().setTaskId(taskId).build(), emptyMap()) }

    /** Deletes tasks; returns the ids deleted. [taskIds] only with [DeleteMode.DELETE_MODE_SELECTED]. */
    suspend fun delete(mode: DeleteMode, taskIds: List<String> = emptyList()): List<String> = source.unary {
        tasks.deleteTasks(DeleteTasksRequest.newBuilder().setMode(mode).addAllTaskIds(taskIds).build(), emptyMap())
    }.deletedTaskIdsList
}
