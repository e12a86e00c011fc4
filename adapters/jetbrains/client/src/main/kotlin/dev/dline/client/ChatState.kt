package dev.dline.client

/**
 * A task's chat as every client renders it, folded from its [TaskEvent]s: the messages in
 * order (deltas appended, finalized ones replaced), the pending ask, the status, and the last
 * seq applied (what a reconnect passes as after_seq). Immutable: [apply] returns the next state.
 */
data class ChatState(
    val messages: List<UiMessage> = emptyList(),
    val pendingAsk: Ask? = null,
    val status: TaskStatus = TaskStatus.TASK_STATUS_UNSPECIFIED,
    val lastError: String? = null,
    val checkpointIds: List<String> = emptyList(),
    val lastSeq: Long = 0,
) {
    fun apply(event: TaskEvent): ChatState {
        if (java.lang.Long.compareUnsigned(event.seq, lastSeq) <= 0) return this // already applied
        val next = when {
            event.hasMessageAdded() -> upsert(event.messageAdded.message)
            event.hasMessageFinalized() -> upsert(event.messageFinalized.message)
            event.hasMessageDelta() -> {
                val delta = event.messageDelta
                copy(messages = messages.map { if (it.id == delta.messageId) it.toBuilder().setText(it.text + delta.text).build() else it })
            }
            event.hasAsk() -> copy(pendingAsk = event.ask)
            event.hasAskResolved() -> copy(pendingAsk = null)
            event.hasStatusChanged() -> copy(
                status = event.statusChanged.status,
                pendingAsk = if (event.statusChanged.status == TaskStatus.TASK_STATUS_WAITING) pendingAsk else null,
            )
            event.hasCheckpointSaved() -> copy(
                checkpointIds = checkpointIds + event.checkpointSaved.checkpointId,
                messages = messages.map {
                    if (it.id == event.checkpointSaved.messageId) it.toBuilder().setCheckpointId(event.checkpointSaved.checkpointId).build() else it
                },
            )
            event.hasError() -> copy(lastError = event.error.message)
            else -> this
        }
        return next.copy(lastSeq = event.seq)
    }

    /** Starts from a GetTask answer (history already on disk), then [apply] events after its last_seq. */
    companion object {
        fun of(task: GetTaskResponse) = ChatState(
            messages = task.messagesList,
            pendingAsk = if (task.hasPendingAsk()) task.pendingAsk else null,
            status = task.task.status,
            checkpointIds = task.messagesList.mapNotNull { it.checkpointId.ifEmpty { null } },
            lastSeq = task.lastSeq,
        )
    }

    private fun upsert(message: UiMessage): ChatState {
        val index = messages.indexOfFirst { it.id == message.id }
        return copy(messages = if (index < 0) messages + message else messages.toMutableList().also { it[index] = message })
    }
}
