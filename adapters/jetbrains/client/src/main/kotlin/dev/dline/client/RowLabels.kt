package dev.dline.client

import java.time.Instant
import java.time.ZoneId
import java.time.format.DateTimeFormatter

/** The one-line texts of the rows the plugin's lists show, so that they are the same (and tested) everywhere. */
object RowLabels {
    private val time = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm")

    /** A chat row: who, the text (control characters visible), "…" while it streams, and its checkpoint marker. */
    fun message(message: UiMessage): String {
        val who = message.role.name.removePrefix("MESSAGE_ROLE_").lowercase()
        val streaming = if (message.partial) " …" else ""
        val marker = if (message.checkpointId.isNotEmpty()) "  [Checkpoint]" else ""
        return "$who: ${VisibleText.of(message.text)}$streaming$marker"
    }

    /** A history row: favorite star, title (one line, control characters visible) and status. */
    fun task(task: TaskSummary): String =
        "${if (task.favorite) "★ " else ""}${VisibleText.line(task.title)}  (${task.status.name.removePrefix("TASK_STATUS_").lowercase()})"

    /** A checkpoint row: its marker text, kind and time ([zone] for the time, the machine's by default). */
    fun checkpoint(checkpoint: Checkpoint, zone: ZoneId = ZoneId.systemDefault()): String {
        val kind = checkpoint.kind.name.removePrefix("CHECKPOINT_KIND_").lowercase().replace('_', ' ')
        val undo = if (checkpoint.undoAvailable) "  (Undo restore available)" else ""
        return "${RestoreMenu.markerText(checkpoint)}  $kind  ${time.format(Instant.ofEpochMilli(checkpoint.createdAt).atZone(zone))}$undo"
    }
}
