package dev.dline.client

import dline.v1.CheckpointOuterClass.CheckpointState
import dline.v1.CheckpointOuterClass.GetStatusResponse
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path
import kotlin.io.path.isDirectory
import kotlin.io.path.listDirectoryEntries
import kotlin.io.path.writeText
import kotlin.time.Duration.Companion.seconds

/**
 * Checkpoints the core repaired (a damaged index rebuilt, a damaged HEAD put back, a repository
 * set aside and started again) are ready with a sentence of their own, naming where the damaged
 * files were kept. The client read a ready status as nothing to say, so the plugin never told the
 * person: [ChatState.CheckpointProgress.repairNote] (ChatStateTest) and [CheckpointRepair.note]
 * give the sentence, [CheckpointRepairNotices] tells it once.
 */
class CheckpointRepairTest {
    private val indexRebuilt = "The checkpoint index was damaged and has been rebuilt; no checkpoint was lost. " +
        "The damaged files were kept aside in "

    @Test
    fun `each repair sentence is told once, however often the stream and GetStatus repeat it`() {
        val index = "$indexRebuilt/a/.git/index.corrupt-1."
        val head = "The checkpoint repository's HEAD was damaged and has been repaired; no checkpoint was lost."
        val notices = CheckpointRepairNotices()
        assertNull(notices.toTell("CHECKPOINT_STATE_READY", CheckpointRepair.READY))
        assertEquals(index, notices.toTell("CHECKPOINT_STATE_READY", index))
        assertNull(notices.toTell("CHECKPOINT_STATE_READY", index))
        assertNull(
            notices.toTell(GetStatusResponse.newBuilder().setState(CheckpointState.CHECKPOINT_STATE_READY).setMessage(index).build()),
        )
        assertEquals(head, notices.toTell("CHECKPOINT_STATE_READY", head))
    }

    private val roots = TestRoots()
    private val workspace: Path = Files.createDirectories(roots.base.resolve("workspace"))
    private var model: ModelServer? = null
    private val harnesses = mutableListOf<SidecarHarness>()

    @AfterEach
    fun stop() {
        harnesses.forEach(SidecarHarness::close)
        model?.close()
    }

    /** A sidecar over [roots] that knows the workspace; returns its facade. */
    private suspend fun sidecar(): DlineClient {
        val harness = SidecarHarness(roots).also(harnesses::add)
        harness.dline.system.initialize("junit", "1", listOf(workspace.toString()))
        return harness.dline
    }

    /**
     * Runs a task to completion (and, the first in a sidecar, its checkpoints to ready: later ones
     * find them ready); returns its id and the events it streamed.
     */
    private suspend fun runTask(
        dline: DlineClient,
        profileId: String,
        text: String,
        untilReady: Boolean = true,
    ): Pair<String, List<TaskEvent>> = coroutineScope {
        val taskId = dline.tasks.newTask(workspace.toString(), text, profileId)
        val events = EventCollector(this, dline.tasks.subscribe(taskId))
        events.await("completion", 60.seconds) { it.hasStatusChanged() && it.statusChanged.status == TaskStatus.TASK_STATUS_COMPLETED }
        if (untilReady && events.seen.none(::ready)) events.await("checkpoints ready", predicate = ::ready)
        events.cancel()
        taskId to events.seen.toList()
    }

    @Test
    fun `a task after its workspace's checkpoint index was damaged tells once where the damaged files were kept`() = runBlocking {
        val done = """{"toolCalls": [{"name": "attempt_completion", "input": {"result": "Done."}}]}"""
        model = ModelServer.start(roots.base, """{"turns": [$done, $done, $done]}""")
        Files.writeString(workspace.resolve("readme.txt"), "kept\n")
        val first = sidecar()
        val profile = first.settings.upsertProfile(
            Profile.newBuilder().setName("Scripted").setProvider("anthropic").setBaseUrl(model!!.url).setModel("claude-scripted")
                .setContextWindow(200_000).build(),
        )
        first.settings.setSecret(profile.id, "api_key", "test-key")
        runTask(first, profile.id, "First")
        harnesses.removeAt(0).close()
        val repos = roots.docsDir.resolve("checkpoints").listDirectoryEntries()
        assertEquals(1, repos.size, "one shadow repository: $repos")
        repos.single().resolve(".git/index").writeText("not an index")

        val dline = sidecar()
        val notices = CheckpointRepairNotices()
        val (taskId, events) = runTask(dline, profile.id, "Second")
        // What the plugin does with each checkpoint status of the stream: the sentence comes out once.
        val told = events.filter { it.hasCheckpointStatus() }
            .mapNotNull { notices.toTell(it.checkpointStatus.state, it.checkpointStatus.message) }
        assertEquals(1, told.size, "told once: $told")
        val note = told.single()
        assertTrue(note.startsWith(indexRebuilt), note)
        val aside = Path.of(note.removePrefix(indexRebuilt).removeSuffix("."))
        assertTrue(aside.isDirectory() && aside.fileName.toString().startsWith("index.corrupt-"), "the folder it names: $aside")
        assertEquals(note, events.fold(ChatState(), ChatState::apply).checkpointProgress?.repairNote, "the chat's state")

        // The core repeats it: GetStatus of this task and of the next; not told again.
        val status = dline.checkpoints.status(taskId)
        assertEquals(note, CheckpointRepair.note(status))
        assertNull(notices.toTell(status))
        val (next, _) = runTask(dline, profile.id, "Third", untilReady = false)
        val again = dline.checkpoints.status(next)
        assertEquals(note, CheckpointRepair.note(again))
        assertNull(notices.toTell(again))
    }
}

private fun ready(event: TaskEvent): Boolean = event.hasCheckpointStatus() && event.checkpointStatus.state == "CHECKPOINT_STATE_READY"
