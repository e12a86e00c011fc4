package dev.dline.client

import dline.v1.CheckpointOuterClass.CheckpointState
import dline.v1.CheckpointOuterClass.GetStatusResponse
import dline.v1.Task.AskResolved
import dline.v1.Task.CheckpointSaved
import dline.v1.Task.CheckpointStatusChanged
import dline.v1.Task.ConversationRewound
import dline.v1.Task.MessageAdded
import dline.v1.Task.MessageDelta
import dline.v1.Task.MessageFinalized
import dline.v1.Task.ModelRetry
import dline.v1.Task.ModelWaiting
import dline.v1.Task.StatusChanged
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Test

class ChatStateTest {
    private var seq = 0L
    private fun event(build: dline.v1.Task.TaskEvent.Builder.() -> Unit): TaskEvent =
        TaskEvent.newBuilder().setSeq(++seq).setTaskId("t").apply(build).build()
    private fun message(id: String, text: String, partial: Boolean) =
        UiMessage.newBuilder().setId(id).setText(text).setPartial(partial).build()

    @Test
    fun `streams a message from added through deltas to finalized`() {
        val state = listOf(
            event { messageAdded = MessageAdded.newBuilder().setMessage(message("m1", "Hel", true)).build() },
            event { messageDelta = MessageDelta.newBuilder().setMessageId("m1").setText("lo").build() },
            event { messageDelta = MessageDelta.newBuilder().setMessageId("m1").setText(" there").build() },
        ).fold(ChatState(), ChatState::apply)
        assertEquals("Hello there", state.messages.single().text)
        val done = state.apply(
            event {
                messageFinalized =
                    MessageFinalized.newBuilder().setMessage(message("m1", "Hello there.", false)).build()
            },
        )
        assertEquals(listOf(message("m1", "Hello there.", false)), done.messages)
        assertEquals(4L, done.lastSeq)
    }

    @Test
    fun `an ask is pending until resolved, and a checkpoint marks its message`() {
        val ask = Ask.newBuilder().setAskId("a1").setKind(AskKind.ASK_KIND_TOOL_APPROVAL).setTool("write_to_file").build()
        var state = ChatState()
            .apply(event { messageAdded = MessageAdded.newBuilder().setMessage(message("m1", "tool", false)).build() })
            .apply(event { this.ask = ask })
            .apply(event { statusChanged = StatusChanged.newBuilder().setStatus(TaskStatus.TASK_STATUS_WAITING).build() })
        assertEquals(ask, state.pendingAsk)
        assertEquals(TaskStatus.TASK_STATUS_WAITING, state.status)
        state = state.apply(event { askResolved = AskResolved.newBuilder().setApproved(true).build() })
            .apply(event { checkpointSaved = CheckpointSaved.newBuilder().setCheckpointId("c1").setMessageId("m1").build() })
        assertNull(state.pendingAsk)
        assertEquals("c1", state.messages.single().checkpointId)
        assertEquals(listOf("c1"), state.checkpointIds)
    }

    @Test
    fun `an event already applied is ignored, so a replay after a reconnect changes nothing`() {
        val delta = event { messageDelta = MessageDelta.newBuilder().setMessageId("m1").setText("!").build() }
        val state = ChatState(messages = listOf(message("m1", "hi", true)), lastSeq = 0).apply(delta)
        assertEquals(state, state.apply(delta))
        assertEquals("hi!", state.messages.single().text)
    }

    private fun added(id: String) = event { messageAdded = MessageAdded.newBuilder().setMessage(message(id, id, false)).build() }
    private fun saved(checkpointId: String, messageId: String) =
        event { checkpointSaved = CheckpointSaved.newBuilder().setCheckpointId(checkpointId).setMessageId(messageId).build() }
    private fun rewound(afterMessageId: String) = event {
        rewound =
            ConversationRewound.newBuilder().setAfterMessageId(afterMessageId).build()
    }

    @Test
    fun `a rewind drops the messages after its point, their checkpoints and the pending ask`() {
        val before = listOf(
            saved("c0", ""),
            added("m1"),
            saved("c1", "m1"),
            added("m2"),
            saved("c2", "m2"),
            added("m3"),
            event { ask = Ask.newBuilder().setAskId("a1").setKind(AskKind.ASK_KIND_FOLLOWUP).build() },
        ).fold(ChatState(), ChatState::apply)
        val after = before.apply(rewound("m1"))
        assertEquals(listOf("m1"), after.messages.map { it.id })
        assertEquals(listOf("c0", "c1"), after.checkpointIds)
        assertNull(after.pendingAsk)
        assertEquals(before.lastSeq + 1, after.lastSeq)
        // New messages after the rewind follow the kept ones.
        assertEquals(listOf("m1", "m4"), after.apply(added("m4")).messages.map { it.id })
    }

    @Test
    fun `a rewind to the start clears every message, and one to an unknown message keeps them`() {
        val state = listOf(added("m1"), saved("c1", "m1"), added("m2")).fold(ChatState(), ChatState::apply)
        val cleared = state.apply(rewound(""))
        assertEquals(emptyList<UiMessage>(), cleared.messages)
        assertEquals(emptyList<String>(), cleared.checkpointIds)
        assertEquals(listOf("m1", "m2"), state.apply(rewound("not-here")).messages.map { it.id })
    }

    @Test
    fun `a retry drops the failed attempt and says so, a late first byte says so, the answer ends both lines`() {
        val retried = listOf(
            added("m1"),
            event {
                messageAdded =
                    MessageAdded.newBuilder().setMessage(
                        message("a1", "Half an ans", true).toBuilder().setRole(MessageRole.MESSAGE_ROLE_ASSISTANT),
                    ).build()
            },
            event {
                modelRetry = ModelRetry.newBuilder().setAttempt(2).setMaxAttempts(5).setDelayMs(4000).setReason("overloaded")
                    .setMessage("retrying in 4 s (attempt 2 of 5)").addDiscardedMessageIds("a1").build()
            },
        ).fold(ChatState(), ChatState::apply)
        assertEquals(listOf("m1"), retried.messages.map { it.id })
        assertEquals("retrying in 4 s (attempt 2 of 5): overloaded", retried.notice)
        val waiting = retried.apply(
            event {
                modelWaiting =
                    ModelWaiting.newBuilder().setWaitedMs(10_000).setTimeoutMs(300_000).setMessage("waiting for the model: 10 s").build()
            },
        )
        assertEquals("waiting for the model: 10 s", waiting.notice, "the newest line replaces the last")
        // The person's own message is no answer; the model's first delta is.
        val mine = message("m2", "and also", false).toBuilder().setRole(MessageRole.MESSAGE_ROLE_USER).build()
        assertEquals(
            "waiting for the model: 10 s",
            waiting.apply(
                event {
                    messageAdded = MessageAdded.newBuilder().setMessage(mine).build()
                },
            ).notice,
        )
        val answering = waiting.apply(event { messageDelta = MessageDelta.newBuilder().setMessageId("m1").setText("!").build() })
        assertEquals("", answering.notice)
        // A tool call as the whole answer (no text) ends it too, as does a status change.
        val tool = UiMessage.newBuilder().setId("t1").setRole(MessageRole.MESSAGE_ROLE_TOOL).setKind("tool").setPartial(true).build()
        assertEquals("", waiting.apply(event { messageAdded = MessageAdded.newBuilder().setMessage(tool).build() }).notice)
        assertEquals(
            "",
            waiting.apply(
                event {
                    statusChanged = StatusChanged.newBuilder().setStatus(TaskStatus.TASK_STATUS_FAILED).build()
                },
            ).notice,
        )
    }

    @Test
    fun `checkpoint progress follows the stream, staging files of a total, then ready`() {
        fun status(state: String, phase: String = "", done: Long = 0, total: Long = 0) = event {
            checkpointStatus =
                CheckpointStatusChanged.newBuilder().setState(
                    state,
                ).setMessage("$state message").setPhase(phase).setFilesDone(done).setFilesTotal(total).setCanDisable(true).build()
        }
        assertNull(ChatState().checkpointProgress)
        val scanning = ChatState().apply(status("CHECKPOINT_STATE_INITIALIZING", "scanning"))
        assertEquals("scanning", scanning.checkpointProgress!!.progressText)
        val staging = scanning.apply(status("CHECKPOINT_STATE_SLOW_INITIALIZATION", "staging", 120, 5000))
        assertEquals(
            ChatState.CheckpointProgress(
                "CHECKPOINT_STATE_SLOW_INITIALIZATION",
                "CHECKPOINT_STATE_SLOW_INITIALIZATION message",
                "staging",
                120,
                5000,
                canRetry = false,
                canDisable = true,
            ),
            staging.checkpointProgress,
        )
        assertEquals("staging 120 of 5000 files", staging.checkpointProgress!!.progressText)
        val ready = staging.apply(status("CHECKPOINT_STATE_READY"))
        assertEquals("CHECKPOINT_STATE_READY", ready.checkpointProgress!!.state)
        assertEquals("", ready.checkpointProgress!!.progressText)
    }

    private fun repairStatus(state: String, message: String) = event {
        checkpointStatus = CheckpointStatusChanged.newBuilder().setState(state).setMessage(message).build()
    }

    @Test
    fun `a ready status after a repair carries its sentence in the chat, plain ready and other states do not`() {
        val note = "The checkpoint index was damaged and has been rebuilt; no checkpoint was lost. " +
            "The damaged files were kept aside in /docs/checkpoints/1a2b/.git/index.corrupt-2026-12-05T04-53-04-113Z."
        val initializing = ChatState().apply(repairStatus("CHECKPOINT_STATE_INITIALIZING", "Checkpoints are initializing."))
        assertNull(initializing.checkpointProgress!!.repairNote)
        val repaired = initializing.apply(repairStatus("CHECKPOINT_STATE_READY", note))
        assertEquals(note, repaired.checkpointProgress!!.repairNote)
        assertNull(repaired.apply(repairStatus("CHECKPOINT_STATE_READY", CheckpointRepair.READY)).checkpointProgress!!.repairNote)
        assertNull(repaired.apply(repairStatus("CHECKPOINT_STATE_FAILED", "boom")).checkpointProgress!!.repairNote)
        val answer = GetStatusResponse.newBuilder().setState(CheckpointState.CHECKPOINT_STATE_READY).setMessage(note).build()
        assertEquals(note, CheckpointRepair.note(answer))
        assertNull(CheckpointRepair.note(answer.toBuilder().setMessage(CheckpointRepair.READY).build()))
        assertNull(CheckpointRepair.note(answer.toBuilder().setState(CheckpointState.CHECKPOINT_STATE_UNAVAILABLE).build()))
    }
}
