package dev.dline.client

import dline.v1.CheckpointOuterClass.CompareResponse
import dline.v1.CheckpointOuterClass.FileStatus
import dline.v1.CheckpointOuterClass.ViewChangesResponse

/**
 * What a multi-file diff window shows for Compare ("Changes since snapshot") and View Changes
 * ("New changes"): one entry per file with the two sides as text. Binary and oversized files get
 * a one-line placeholder instead of content, and so do changes the checkpoints do not track
 * (their earlier content unknown). A change of permissions (a private key opened to 644, a script
 * made executable) is in `permissions`, "600 → 644": a diff of text alone does not show it. The
 * plugin hands the entries to DiffManager.
 */
data class CheckpointDiff(val title: String, val entries: List<Entry>) {
    data class Entry(
        val path: String,
        val status: FileStatus,
        val before: String,
        val after: String,
        val note: String?,
        val permissions: String? = null,
    ) {
        /** The diff's title: "Changes since snapshot: id.key (permissions 600 → 644)". */
        fun titleIn(diffTitle: String) = "$diffTitle: $path" + (permissions?.let { " (permissions $it)" } ?: "")
    }

    companion object {
        const val COMPARE_TITLE = "Changes since snapshot"
        const val VIEW_CHANGES_TITLE = "New changes"
        const val NOT_TRACKED_NOTE = "Not tracked by checkpoints: not compared or restored."

        fun ofCompare(response: CompareResponse) = CheckpointDiff(COMPARE_TITLE, response.filesList.map(::entry))

        fun ofViewChanges(response: ViewChangesResponse) = CheckpointDiff(VIEW_CHANGES_TITLE, response.filesList.map(::entry))

        // A change the checkpoints do not track (an ignored .env, a file under build/): its
        // earlier content is unknown, so an empty side would read as "the file was empty".
        private fun entry(file: FileChange): Entry {
            val note = when {
                file.notTracked -> NOT_TRACKED_NOTE
                file.binary -> "Binary file: not shown."
                file.tooLarge -> "File too large to show."
                else -> null
            }
            val permissions = if (file.modeBefore.isNotEmpty()) "${file.modeBefore} → ${file.modeAfter}" else null
            return if (note != null) {
                Entry(file.path, file.status, note, note, note, permissions)
            } else {
                Entry(file.path, file.status, file.before, file.after, null, permissions)
            }
        }
    }
}
