package dev.dline.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

class ListPatchTest {
    private data class Row(val id: String, val text: String)

    private fun patch(old: List<Row>, new: List<Row>) = ListPatch.between(old, new) { a, b -> a.id == b.id }.also { p ->
        assertEquals(new, old.toMutableList().also(p::applyTo), "applying the patch gives the new list")
    }

    @Test
    fun `a streamed token changes one row, and nothing else`() {
        val p = patch(listOf(Row("u", "hi"), Row("a", "Hel")), listOf(Row("u", "hi"), Row("a", "Hello")))
        assertEquals(listOf(1 to Row("a", "Hello")), p.changed)
        assertEquals(null, p.removedFrom)
        assertTrue(p.added.isEmpty())
    }

    @Test
    fun `a new message is appended`() {
        val p = patch(listOf(Row("u", "hi")), listOf(Row("u", "hi"), Row("a", "")))
        assertTrue(p.changed.isEmpty())
        assertEquals(listOf(Row("a", "")), p.added)
    }

    @Test
    fun `a rewind removes the rows after its point, and another row from a position on replaces the rest`() {
        val rows = listOf(Row("a", "1"), Row("b", "2"), Row("c", "3"))
        assertEquals(ListPatch<Row>(emptyList(), 1, emptyList()), patch(rows, rows.take(1)))
        val replaced = patch(rows, listOf(Row("a", "1"), Row("x", "9")))
        assertEquals(1, replaced.removedFrom)
        assertEquals(listOf(Row("x", "9")), replaced.added)
        assertTrue(patch(rows, rows).isEmpty)
    }

    @Test
    fun `row texts for the chat, history and checkpoints`() {
        val message = UiMessage.newBuilder().setRole(
            dline.v1.Task.MessageRole.MESSAGE_ROLE_ASSISTANT,
        ).setText("Hi").setPartial(true).setCheckpointId("c1").build()
        assertEquals("assistant: Hi …  [Checkpoint]", RowLabels.message(message))
        val task = TaskSummary.newBuilder().setTitle("Fix it").setFavorite(true).setStatus(TaskStatus.TASK_STATUS_COMPLETED).build()
        assertEquals("★ Fix it  (completed)", RowLabels.task(task))
        val checkpoint = Checkpoint.newBuilder().setKind(dline.v1.CheckpointOuterClass.CheckpointKind.CHECKPOINT_KIND_BEFORE_RESTORE)
            .setHasFiles(true).setUndoAvailable(true).setCreatedAt(0).build()
        assertEquals(
            "Before restore  before restore  1970-01-01 00:00  (Undo restore available)",
            RowLabels.checkpoint(checkpoint, java.time.ZoneOffset.UTC),
        )
    }
}
