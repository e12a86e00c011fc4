package dev.dline.client

import dline.v1.CheckpointOuterClass.CompareResponse
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

class RestoreMenuTest {
    private fun checkpoint(
        kind: CheckpointKind = CheckpointKind.CHECKPOINT_KIND_TURN,
        hasFiles: Boolean = true,
        restored: Boolean = false,
        undoAvailable: Boolean = false,
    ) = Checkpoint.newBuilder().setId(
        "c1",
    ).setKind(kind).setHasFiles(hasFiles).setRestored(restored).setUndoAvailable(undoAvailable).build()

    @Test
    fun `a checkpoint with files offers files and task first, the two others under More options`() {
        val options = RestoreMenu.optionsFor(checkpoint())
        assertEquals(
            listOf(
                Triple("Restore Files & Task", "Revert files and clear messages after this point", false),
                Triple("Restore Files Only", "Revert files to this checkpoint", true),
                Triple("Restore Task Only", "Clear messages after this point", true),
            ),
            options.map { Triple(it.title, it.text, it.underMoreOptions) },
        )
        assertEquals(
            listOf(RestoreMode.RESTORE_MODE_FILES_AND_TASK, RestoreMode.RESTORE_MODE_FILES, RestoreMode.RESTORE_MODE_TASK),
            options.map { it.mode },
        )
        assertEquals(listOf(true, true, true), options.map { it.enabled })
        assertEquals("Checkpoint", RestoreMenu.markerText(checkpoint()))
    }

    @Test
    fun `no file snapshot or a compaction checkpoint offers only Restore Task Only`() {
        for (c in listOf(checkpoint(hasFiles = false), checkpoint(kind = CheckpointKind.CHECKPOINT_KIND_COMPACTION))) {
            val options = RestoreMenu.optionsFor(c)
            assertEquals(listOf(RestoreMode.RESTORE_MODE_TASK), options.map { it.mode })
            assertEquals(false, options.single().underMoreOptions)
        }
        assertEquals("Compaction checkpoint", RestoreMenu.markerText(checkpoint(kind = CheckpointKind.CHECKPOINT_KIND_COMPACTION)))
    }

    @Test
    fun `after a file restore, Restore Files Only is disabled and the marker says restored`() {
        val options = RestoreMenu.optionsFor(checkpoint(restored = true))
        assertEquals(false, options.single { it.mode == RestoreMode.RESTORE_MODE_FILES }.enabled)
        assertEquals("Checkpoint (restored)", RestoreMenu.markerText(checkpoint(restored = true)))
    }

    @Test
    fun `the checkpoint a file restore saved offers Undo restore, then Restore Files Only alone`() {
        val undo = checkpoint(kind = CheckpointKind.CHECKPOINT_KIND_BEFORE_RESTORE, undoAvailable = true)
        val option = RestoreMenu.optionsFor(undo).single()
        assertEquals("Undo restore", option.title)
        assertEquals(RestoreMode.RESTORE_MODE_FILES, option.mode)
        assertEquals(false, option.underMoreOptions)
        assertEquals(true, option.enabled)
        assertEquals("Before restore", RestoreMenu.markerText(undo))
        val later = RestoreMenu.optionsFor(checkpoint(kind = CheckpointKind.CHECKPOINT_KIND_BEFORE_RESTORE, undoAvailable = false))
        assertEquals(listOf("Restore Files Only"), later.map { it.title })
        assertEquals(false, later.single().underMoreOptions)
        val undone = RestoreMenu.optionsFor(
            checkpoint(kind = CheckpointKind.CHECKPOINT_KIND_BEFORE_RESTORE, undoAvailable = false, restored = true),
        )
        assertEquals(false, undone.single().enabled)
    }

    @Test
    fun `compare becomes a diff titled Changes since snapshot, binary files as a note`() {
        val response = CompareResponse.newBuilder()
            .addFiles(FileChange.newBuilder().setPath("a.txt").setStatus(FileStatus.FILE_STATUS_MODIFIED).setBefore("1\n").setAfter("2\n"))
            .addFiles(FileChange.newBuilder().setPath("logo.png").setStatus(FileStatus.FILE_STATUS_ADDED).setBinary(true))
            .build()
        val diff = CheckpointDiff.ofCompare(response)
        assertEquals("Changes since snapshot", diff.title)
        assertEquals(CheckpointDiff.Entry("a.txt", FileStatus.FILE_STATUS_MODIFIED, "1\n", "2\n", null), diff.entries[0])
        assertEquals("Binary file: not shown.", diff.entries[1].note)
    }

    @Test
    fun `a change the checkpoints do not track is a note on both sides, never an empty side`() {
        val response = CompareResponse.newBuilder()
            .addFiles(FileChange.newBuilder().setPath(".env").setStatus(FileStatus.FILE_STATUS_MODIFIED).setNotTracked(true))
            .addFiles(FileChange.newBuilder().setPath("node_modules/").setStatus(FileStatus.FILE_STATUS_ADDED).setNotTracked(true))
            .build()
        val diff = CheckpointDiff.ofCompare(response)
        val note = "Not tracked by checkpoints: not compared or restored."
        assertEquals(CheckpointDiff.Entry(".env", FileStatus.FILE_STATUS_MODIFIED, note, note, note), diff.entries[0])
        assertEquals(note, diff.entries[1].note)
    }

    @Test
    fun `a change of permissions is named in the entry's title, its two sides the same text`() {
        val response = CompareResponse.newBuilder()
            .addFiles(
                FileChange.newBuilder().setPath("id.key").setStatus(FileStatus.FILE_STATUS_MODIFIED)
                    .setBefore("private\n").setAfter("private\n").setModeBefore("600").setModeAfter("644"),
            )
            .addFiles(FileChange.newBuilder().setPath("a.txt").setStatus(FileStatus.FILE_STATUS_MODIFIED).setBefore("1\n").setAfter("2\n"))
            .build()
        val diff = CheckpointDiff.ofCompare(response)
        assertEquals("600 → 644", diff.entries[0].permissions)
        assertEquals("Changes since snapshot: id.key (permissions 600 → 644)", diff.entries[0].titleIn(diff.title))
        assertEquals("Changes since snapshot: a.txt", diff.entries[1].titleIn(diff.title))
    }
}
