package dev.dline.client

import dline.v1.CheckpointOuterClass.RestoreResponse
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test

class RestoreSummaryTest {
    private fun kept(path: String, reason: KeptReason = KeptReason.KEPT_REASON_NOT_TRACKED) =
        KeptPath.newBuilder().setPath(path).setReason(reason).build()

    @Test
    fun `a files restore names each file it kept as it was, and why`() {
        val res = RestoreResponse.newBuilder()
            .setFilesRestored(true)
            .addRestoredPaths("src/app.js")
            .addKeptPaths(kept(".env"))
            .addKeptPaths(kept("build/out.txt"))
            .addKeptPaths(kept("assets/big.bin", KeptReason.KEPT_REASON_TOO_LARGE))
            .addKeptPaths(kept("lib/new.js", KeptReason.KEPT_REASON_BEYOND_LINK))
            .setConversationRestored(true)
            .build()
        assertEquals(
            "Restored 1 file(s), deleted 0, kept 4 as they were, conversation restored.\n" +
                "kept as is: not tracked by checkpoints: .env\n" +
                "kept as is: not tracked by checkpoints: build/out.txt\n" +
                "kept as is: too large to snapshot: assets/big.bin\n" +
                "kept as is: a folder on its way is a link now: lib/new.js",
            RestoreSummary.of(res),
        )
    }

    @Test
    fun `a restore of a running task says the run was stopped first`() {
        val res = RestoreResponse.newBuilder()
            .setFilesRestored(true)
            .addDeletedPaths("ticks.txt")
            .setRunStopped(true)
            .build()
        assertEquals("The task was running and was stopped first. Restored 0 file(s), deleted 1.", RestoreSummary.of(res))
    }

    @Test
    fun `a restore after the person's git history moved says a restore does not undo it`() {
        val note = "Your git repository moved since this checkpoint (main at 1a2b3c4d then, main at 5e6f7a8b now): " +
            "a restore puts files back, never commits, branches or the index."
        val res = RestoreResponse.newBuilder()
            .setFilesRestored(true)
            .addRestoredPaths("a.txt")
            .setRepositoryNote(note)
            .build()
        assertEquals("Restored 1 file(s), deleted 0.\n$note", RestoreSummary.of(res))
    }

    @Test
    fun `a long list ends with how many more, and names are shown with their control characters visible`() {
        val many = (1..25).map { kept("build/f$it.txt") } + kept("odd\u001bname")
        val lines = RestoreSummary.keptLines(many)
        assertEquals(RestoreSummary.KEPT_SHOWN + 1, lines.size)
        assertEquals("kept as is: …and 6 more", lines.last())
        assertEquals("kept as is: not tracked by checkpoints: odd\\ename", RestoreSummary.keptLines(listOf(many.last())).single())
    }

    @Test
    fun `when the core's look stopped at its limit, a last line says more may have changed`() {
        val res = RestoreResponse.newBuilder()
            .setFilesRestored(true)
            .addRestoredPaths("src/app.js")
            .addKeptPaths(kept("node_modules/x/index.js"))
            .setKeptPathsIncomplete(true)
            .build()
        assertEquals(
            "Restored 1 file(s), deleted 0, kept 1 as they were.\n" +
                "kept as is: not tracked by checkpoints: node_modules/x/index.js\n" +
                RestoreSummary.MAYBE_MORE,
            RestoreSummary.of(res),
        )
    }

    @Test
    fun `a restore of the task only says so`() {
        assertEquals("Conversation restored.", RestoreSummary.of(RestoreResponse.newBuilder().setConversationRestored(true).build()))
    }
}
