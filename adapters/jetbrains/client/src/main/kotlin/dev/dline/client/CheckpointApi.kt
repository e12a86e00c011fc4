package dev.dline.client

import dline.v1.CheckpointOuterClass.CompareRequest
import dline.v1.CheckpointOuterClass.CompareResponse
import dline.v1.CheckpointOuterClass.DisableRequest
import dline.v1.CheckpointOuterClass.EditMessageMode
import dline.v1.CheckpointOuterClass.EditMessageRequest
import dline.v1.CheckpointOuterClass.EditMessageResponse
import dline.v1.CheckpointOuterClass.GetStatusRequest
import dline.v1.CheckpointOuterClass.GetStatusResponse
import dline.v1.CheckpointOuterClass.ListCheckpointsRequest
import dline.v1.CheckpointOuterClass.RestoreRequest
import dline.v1.CheckpointOuterClass.RestoreResponse
import dline.v1.CheckpointOuterClass.RetryRequest
import dline.v1.CheckpointOuterClass.ViewChangesRequest
import dline.v1.CheckpointOuterClass.ViewChangesResponse

/** CheckpointService: list, compare (the plugin shows files in DiffManager), restore. */
class CheckpointApi internal constructor(private val source: ConnectionSource) {
    suspend fun list(taskId: String): List<Checkpoint> =
        source.unary { checkpoints.listCheckpoints(ListCheckpointsRequest.newBuilder().setTaskId(taskId).build(), emptyMap()) }
            .checkpointsList

    /** The checkpoint against the current workspace ("Changes since snapshot"). */
    suspend fun compare(taskId: String, checkpointId: String): CompareResponse = source.unary {
        checkpoints.compare(CompareRequest.newBuilder().setTaskId(taskId).setCheckpointId(checkpointId).build(), emptyMap())
    }

    /**
     * What the task changed since its previous completion ("New changes"), up to its latest
     * completion, or up to the completion [checkpointId] (a completion checkpoint of [list]) or
     * [messageId] (the completion result's message) names, against the completion before it.
     * A checkpoint that is no completion of the task fails `invalid_argument`, an unknown one `not_found`.
     */
    suspend fun viewChanges(taskId: String, checkpointId: String = "", messageId: String = ""): ViewChangesResponse = source.unary {
        checkpoints.viewChanges(
            ViewChangesRequest.newBuilder().setTaskId(taskId).setCheckpointId(checkpointId).setMessageId(messageId)
                .build(),
            emptyMap(),
        )
    }

    suspend fun restore(taskId: String, checkpointId: String, mode: RestoreMode): RestoreResponse = source.unary {
        checkpoints.restore(
            RestoreRequest.newBuilder().setTaskId(taskId).setCheckpointId(checkpointId).setMode(mode).build(),
            emptyMap(),
        )
    }

    /**
     * Restore Chat / Restore All for an edited message the user sent. With [dryRun] the core
     * answers what Restore All would do (the checkpoint it restores the files to, the files it
     * would write, delete and keep) and changes nothing: ask it first to tell the person which
     * files Restore All will change, instead of choosing the checkpoint in the client.
     */
    suspend fun editMessage(
        taskId: String,
        messageId: String,
        text: String,
        mode: EditMessageMode,
        dryRun: Boolean = false,
    ): EditMessageResponse = source.unary {
        checkpoints.editMessage(
            EditMessageRequest.newBuilder().setTaskId(taskId).setMessageId(messageId).setText(text).setMode(mode)
                .setDryRun(dryRun).build(),
            emptyMap(),
        )
    }

    suspend fun status(taskId: String = "", workspaceRoot: String = ""): GetStatusResponse = source.unary {
        checkpoints.getStatus(GetStatusRequest.newBuilder().setTaskId(taskId).setWorkspaceRoot(workspaceRoot).build(), emptyMap())
    }

    suspend fun retry(taskId: String = "", workspaceRoot: String = ""): GetStatusResponse = source.unary {
        checkpoints.retry(RetryRequest.newBuilder().setTaskId(taskId).setWorkspaceRoot(workspaceRoot).build(), emptyMap())
    }.status

    suspend fun disable(taskId: String = "", workspaceRoot: String = ""): GetStatusResponse = source.unary {
        checkpoints.disable(DisableRequest.newBuilder().setTaskId(taskId).setWorkspaceRoot(workspaceRoot).build(), emptyMap())
    }.status
}
