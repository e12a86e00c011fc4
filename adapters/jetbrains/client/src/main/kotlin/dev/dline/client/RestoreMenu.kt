package dev.dline.client

import dline.v1.CheckpointOuterClass.CheckpointKind

/**
 * The restore menu of one checkpoint, with the texts of the checkpoints spec ("Restoring a
 * checkpoint"), so that every editor offers the same choices. The plugin only renders it.
 */
object RestoreMenu {
    data class Option(
        val mode: RestoreMode,
        /** The option's name, e.g. "Restore Files & Task". */
        val title: String,
        /** The menu text shown under the name. */
        val text: String,
        /** Shown under "More options" rather than directly. */
        val underMoreOptions: Boolean,
        val enabled: Boolean,
    )

    const val MORE_OPTIONS = "More options"

    private val filesAndTask = Option(
        RestoreMode.RESTORE_MODE_FILES_AND_TASK,
        "Restore Files & Task",
        "Revert files and clear messages after this point",
        underMoreOptions = false,
        enabled = true,
    )
    private val filesOnly = Option(
        RestoreMode.RESTORE_MODE_FILES,
        "Restore Files Only",
        "Revert files to this checkpoint",
        underMoreOptions = true,
        enabled = true,
    )
    private val taskOnly = Option(
        RestoreMode.RESTORE_MODE_TASK,
        "Restore Task Only",
        "Clear messages after this point",
        underMoreOptions = true,
        enabled = true,
    )

    /** A file restore's undo: the files go back to how they were just before it; the conversation stays. */
    private val undoRestore = Option(
        RestoreMode.RESTORE_MODE_FILES,
        "Undo restore",
        "Put the files back as they were before the restore",
        underMoreOptions = false,
        enabled = true,
    )

    /**
     * A checkpoint without a file snapshot, or a compaction checkpoint, offers only Restore Task
     * Only; after its files were restored, Restore Files Only is disabled until a new checkpoint.
     * The checkpoint a file restore saved first offers only "Undo restore" while no checkpoint
     * followed it; after that only Restore Files Only: it holds the files as they were before the
     * restore and follows no message, so the core refuses to restore the conversation to it.
     */
    fun optionsFor(checkpoint: Checkpoint): List<Option> {
        if (checkpoint.kind == CheckpointKind.CHECKPOINT_KIND_BEFORE_RESTORE && checkpoint.hasFiles) {
            if (checkpoint.undoAvailable) return listOf(undoRestore)
            return listOf(filesOnly.copy(underMoreOptions = false, enabled = !checkpoint.restored))
        }
        if (!checkpoint.hasFiles || checkpoint.kind == CheckpointKind.CHECKPOINT_KIND_COMPACTION) {
            return listOf(taskOnly.copy(underMoreOptions = false))
        }
        return listOf(filesAndTask, filesOnly.copy(enabled = !checkpoint.restored), taskOnly)
    }

    /** The marker text of a checkpoint in the chat. */
    fun markerText(checkpoint: Checkpoint): String = when {
        checkpoint.kind == CheckpointKind.CHECKPOINT_KIND_COMPACTION -> "Compaction checkpoint"
        checkpoint.kind == CheckpointKind.CHECKPOINT_KIND_BEFORE_RESTORE -> "Before restore"
        checkpoint.restored -> "Checkpoint (restored)"
        else -> "Checkpoint"
    }
}
