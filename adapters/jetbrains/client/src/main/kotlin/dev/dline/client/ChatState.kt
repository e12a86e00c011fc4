package dev.dline.client

import dline.v1.Task.TaskEvent.EventCase

/**
 * A task's chat as every client renders it, folded from its [TaskEvent]s: the messages in
 * order (deltas appended, finalized ones replaced; a tool row carries its call's status, edits
 * and command in [UiMessage.getToolCall]), the pending ask, the status, the checkpoints marked
 * on messages, the one-line [notice] while the model is retried or slow to answer, the
 * checkpoints' [checkpointProgress], and the last seq applied (what a reconnect passes as
 * after_seq). The recorded
 * streams of test/conformance/fold must fold to the core's own view (ChatStateConformanceTest).
 * Immutable: [apply] returns the next state. One small function per event kind, so a new kind
 * is one more branch in [apply].
 */
data class ChatState(
    val messages: List<UiMessage> = emptyList(),
    val pendingAsk: Ask? = null,
    val status: TaskStatus = TaskStatus.TASK_STATUS_UNSPECIFIED,
    val lastError: String? = null,
    val checkpoints: List<CheckpointMark> = emptyList(),
    val lastSeq: Long = 0,
    /**
     * "retrying in 4 s (attempt 2 of 5): overloaded" or "waiting for the model: 10 s (gives up
     * after 300 s without an answer)": one line while a request is retried or its first byte is
     * late; "" once the model answers or the status changes.
     */
    val notice: String = "",
    /** The checkpoints of the task's workspace as the stream said last; null until it says. */
    val checkpointProgress: CheckpointProgress? = null,
) {
    /** A checkpoint saved after [messageId] ("" when it belongs to no message, e.g. the baseline). */
    data class CheckpointMark(val checkpointId: String, val messageId: String)

    /**
     * The checkpoints' [state] ("CHECKPOINT_STATE_INITIALIZING", "CHECKPOINT_STATE_READY",
     * "CHECKPOINT_STATE_UNAVAILABLE", ...) and its sentence; while they initialize, the [phase]
     * ("scanning" the workspace, or "staging" [filesDone] of [filesTotal] files).
     */
    data class CheckpointProgress(
        val state: String,
        val message: String,
        val phase: String,
        val filesDone: Long,
        val filesTotal: Long,
        val canRetry: Boolean,
        val canDisable: Boolean,
    ) {
        /** "staging 120 of 5000 files", "scanning", or "" when no phase is under way. */
        val progressText: String
            get() = if (phase == "staging" && filesTotal > 0) "staging $filesDone of $filesTotal files" else phase

        /**
         * Ready after the core repaired the checkpoint store: its sentence ("The checkpoint index
         * was damaged and has been rebuilt; ... kept aside in …"); null otherwise. A UI tells it
         * once ([CheckpointRepairNotices]).
         */
        val repairNote: String?
            get() = CheckpointRepair.note(state, message)

        companion object {
            fun of(event: dline.v1.Task.CheckpointStatusChanged) = CheckpointProgress(
                event.state,
                event.message,
                event.phase,
                event.filesDone,
                event.filesTotal,
                event.canRetry,
                event.canDisable,
            )
        }
    }

    val checkpointIds: List<String> get() = checkpoints.map { it.checkpointId }

    fun apply(event: TaskEvent): ChatState {
        if (java.lang.Long.compareUnsigned(event.seq, lastSeq) <= 0) return this // already applied
        val next = when (event.eventCase) {
            // A message of the model's: its answer is coming, a retry or wait line is over.
            EventCase.MESSAGE_ADDED -> upsert(
                event.messageAdded.message,
            ).answered(event.messageAdded.message.role != MessageRole.MESSAGE_ROLE_USER)

            EventCase.MESSAGE_FINALIZED -> upsert(event.messageFinalized.message)

            EventCase.MESSAGE_DELTA -> appendDelta(event.messageDelta.messageId, event.messageDelta.text).answered(true)

            // Reasoning streams into a message of its own (kind "reasoning") the same way.
            EventCase.REASONING_DELTA -> appendDelta(event.reasoningDelta.messageId, event.reasoningDelta.text).answered(true)

            EventCase.ASK -> copy(pendingAsk = event.ask)

            EventCase.ASK_RESOLVED -> askResolved(event.askResolved.askId)

            EventCase.MODEL_RETRY -> dropped(event.modelRetry.discardedMessageIdsList.toSet()).copy(notice = retryLine(event.modelRetry))

            EventCase.MODEL_WAITING -> copy(notice = event.modelWaiting.message)

            EventCase.CHECKPOINT_STATUS -> copy(checkpointProgress = CheckpointProgress.of(event.checkpointStatus))

            EventCase.STATUS_CHANGED -> statusChanged(event.statusChanged.status).copy(notice = "")

            EventCase.CHECKPOINT_SAVED -> checkpointSaved(event.checkpointSaved.checkpointId, event.checkpointSaved.messageId)

            EventCase.ERROR -> copy(lastError = event.error.message)

            EventCase.REWOUND -> rewound(event.rewound.afterMessageId)

            else -> this
        }
        return next.copy(lastSeq = event.seq)
    }

    companion object {
        /** Starts from a GetTask answer (history already on disk), then [apply] events after its last_seq. */
        fun of(task: GetTaskResponse) = ChatState(
            messages = task.messagesList,
            pendingAsk = if (task.hasPendingAsk()) task.pendingAsk else null,
            status = task.task.status,
            checkpoints = task.messagesList.filter { it.checkpointId.isNotEmpty() }.map { CheckpointMark(it.checkpointId, it.id) },
            lastSeq = task.lastSeq,
        )
    }

    /** A whole message, new or replacing its earlier form (a tool row at each change of its call). */
    private fun upsert(message: UiMessage): ChatState {
        val index = messages.indexOfFirst { it.id == message.id }
        if (index < 0) return copy(messages = messages + message)
        // A row replaced whole keeps the checkpoint an event marked on it.
        val kept = messages[index].checkpointId
        val next = if (message.checkpointId.isEmpty() && kept.isNotEmpty()) message.toBuilder().setCheckpointId(kept).build() else message
        return copy(messages = messages.toMutableList().also { it[index] = next })
    }

    private fun answered(yes: Boolean): ChatState = if (yes && notice.isNotEmpty()) copy(notice = "") else this

    private fun retryLine(retry: dline.v1.Task.ModelRetry): String =
        if (retry.reason.isEmpty()) retry.message else "${retry.message}: ${retry.reason}"

    /** The question with this id was answered (or dropped: nobody will answer it). */
    private fun askResolved(askId: String): ChatState = if (askId.isEmpty() || pendingAsk?.askId == askId) copy(pendingAsk = null) else this

    /** A failed attempt's partial answer is gone (the model is asked again). */
    private fun dropped(ids: Set<String>): ChatState = if (ids.isEmpty()) this else copy(messages = messages.filterNot { it.id in ids })

    private fun appendDelta(messageId: String, text: String): ChatState =
        copy(messages = messages.map { if (it.id == messageId) it.toBuilder().setText(it.text + text).build() else it })

    private fun statusChanged(status: TaskStatus): ChatState =
        copy(status = status, pendingAsk = if (status == TaskStatus.TASK_STATUS_WAITING) pendingAsk else null)

    private fun checkpointSaved(checkpointId: String, messageId: String): ChatState = copy(
        checkpoints = checkpoints + CheckpointMark(checkpointId, messageId),
        messages = messages.map { if (it.id == messageId) it.toBuilder().setCheckpointId(checkpointId).build() else it },
    )

    /**
     * A restore cut the conversation: messages after [afterMessageId] are gone ("" = all of them),
     * and with them their checkpoint marks and any pending ask. An id this chat does not know
     * leaves the messages as they are (the next GetTask shows the truth).
     */
    private fun rewound(afterMessageId: String): ChatState {
        val keep = if (afterMessageId.isEmpty()) 0 else messages.indexOfFirst { it.id == afterMessageId } + 1
        val kept = if (afterMessageId.isNotEmpty() && keep == 0) messages else messages.take(keep)
        val keptIds = kept.mapTo(HashSet()) { it.id }
        return copy(
            messages = kept,
            checkpoints = checkpoints.filter { it.messageId.isEmpty() || it.messageId in keptIds },
            pendingAsk = null,
        )
    }
}
