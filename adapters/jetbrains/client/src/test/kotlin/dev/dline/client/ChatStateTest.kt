package dev.dline.client

import dline.v1.Task.AskResolved
import dline.v1.Task.CheckpointSaved
import dline.v1.Task.ConversationRewound
import dline.v1.Task.MessageAdded
import dline.v1.Task.MessageDelta
import dline.v1.Task.MessageFinalized
import dline.v1.Task.StatusChanged
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Test

class ChatStateTest {
    private var seq = 0L
    private fun event(build: dline.v1.Task.TaskEvent.Builder.() -> Unit): TaskEvent = TaskEvent.newBuilder().setSeq(++seq).setTaskId("t").apply(build).build()
    private fun message(id: String, text: String, partial: Boolean) = UiMessage.newBuilder().setId(id).setText(text).setPartial(partial).build()

    @Test
    fun `streams a message from added through deltas to finalized`() {
        val state = listOf(
            event { messageAdded = MessageAdded.newBuilder().setMessage(message("m1", "Hel", true)).build() },
            event { messageDelta = MessageDelta.newBuilder().setMessageId("m1").setText("lo").build() },
            event { messageDelta = MessageDelta.newBuilder().setMessageId("m1").setText(" there").build() },
        ).fold(ChatState(), ChatState::apply)
        assertEquals("Hello there", state.messages.single().text)
        val done = state.apply(event { messageFinalized = MessageFinalized.newBuilder().setMessage(message("m1", "Hello there.", false)).build() })
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
    private fun rewound(afterMessageId: String) = event { rewound = ConversationRewound.newBuilder().setAfterMessageId(afterMessageId).build() }

    @Test
    fun `a rewind drops the messages after its point, their checkpoints and the pending ask`() {
        val before = listOf(
            saved("c0", ""), added("m1"), saved("c1", "m1"), added("m2"), saved("c2", "m2"), added("m3"),
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
}
