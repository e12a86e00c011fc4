package dev.dline.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

class VisibleTextTest {
    @Test
    fun `a command that would redraw the line shows its escapes instead`() {
        val spoof = "touch PWNED #\r\u001b[2K\u001b[1A\u001b[2K? command_approval: execute_command ls -la"
        assertEquals(
            "touch PWNED #\\r\\e[2K\\e[1A\\e[2K? command_approval: execute_command ls -la",
            VisibleText.line(spoof),
        )
    }

    @Test
    fun `newlines and tabs stay in a reply, CR LF is a newline, other controls and direction overrides become escapes`() {
        assertEquals("a\n\tb\nc\\x07\\x7f\\x9b\\u202eevil\\u2066", VisibleText.of("a\r\n\tb\nc\u0007\u007f\u009b\u202eevil\u2066"))
        assertEquals("plain text, accents é and emoji 🙂 untouched", VisibleText.of("plain text, accents é and emoji 🙂 untouched"))
    }

    @Test
    fun `rows the plugin lists show model text with its controls visible`() {
        val message = UiMessage.newBuilder().setRole(MessageRole.MESSAGE_ROLE_ASSISTANT).setText("done\u001b[2J").build()
        assertEquals("assistant: done\\e[2J", RowLabels.message(message))
        val task = TaskSummary.newBuilder().setTitle("Fix\nit\u202e").setStatus(TaskStatus.TASK_STATUS_COMPLETED).build()
        assertEquals("Fix\\nit\\u202e  (completed)", RowLabels.task(task))
    }
}
