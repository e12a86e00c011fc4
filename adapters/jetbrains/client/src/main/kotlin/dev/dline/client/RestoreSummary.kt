package dev.dline.client

import dline.v1.CheckpointOuterClass.RestoreResponse

/**
 * What a restore did, as every Dline client says it (docs/checkpoints.md, "A restore"): the
 * counts, then a line per file it left as it was, with why ("kept as is: not tracked by
 * checkpoints: .env"): a file the checkpoints do not track that changed after the checkpoint is
 * not put back, and the person must be told so.
 */
object RestoreSummary {
    /** Kept files named one per line; past it, "…and N more". */
    const val KEPT_SHOWN = 20

    fun of(res: RestoreResponse): String {
        if (!res.filesRestored) return if (res.conversationRestored) "Conversation restored." else "Nothing restored."
        val kept = res.keptPathsList
        val head = buildString {
            if (res.runStopped) append("The task was running and was stopped first. ")
            append("Restored ${res.restoredPathsCount} file(s), deleted ${res.deletedPathsCount}")
            if (kept.isNotEmpty()) append(", kept ${kept.size} as they were")
            if (res.conversationRestored) append(", conversation restored")
            append('.')
        }
        val note = if (res.repositoryNote.isEmpty()) emptyList() else listOf(VisibleText.line(res.repositoryNote))
        return (listOf(head) + keptLines(kept, res.keptPathsIncomplete) + note).joinToString("\n")
    }

    /**
     * "kept as is: <why>: <path>", a line each (the first KEPT_SHOWN). `incomplete`: the core's
     * look for changed files the checkpoints do not track stopped at its limit, and a last line
     * says more of them may have changed (only beside named files: a large node_modules stops
     * the look on every restore).
     */
    fun keptLines(kept: List<KeptPath>, incomplete: Boolean = false): List<String> {
        val lines = kept.take(KEPT_SHOWN).map { "kept as is: ${why(it.reason)}: ${VisibleText.line(it.path)}" }
        val all = if (kept.size > KEPT_SHOWN) lines + "kept as is: …and ${kept.size - KEPT_SHOWN} more" else lines
        return if (incomplete && kept.isNotEmpty()) all + MAYBE_MORE else all
    }

    const val MAYBE_MORE =
        "kept as is: more files the checkpoints do not track may have changed too"

    private fun why(reason: KeptReason): String = when (reason) {
        KeptReason.KEPT_REASON_TOO_LARGE -> "too large to snapshot"
        KeptReason.KEPT_REASON_NOT_TRACKED -> "not tracked by checkpoints"
        KeptReason.KEPT_REASON_BEYOND_LINK -> "a folder on its way is a link now"
        else -> "not restored"
    }
}
