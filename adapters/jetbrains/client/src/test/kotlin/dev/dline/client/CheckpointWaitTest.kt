package dev.dline.client

import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.CopyOnWriteArrayList
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.time.Duration.Companion.seconds

/**
 * A checkpoint call waits while another Dline window holds the workspace's checkpoint repository
 * (its baseline of a large workspace, a restore), up to two minutes, and the client gave a plugin
 * nothing to tell the person. [CheckpointHeldElsewhere] asks the core's status while an action's
 * calls wait and hands the core's sentence, naming that window's process, to the UI once. Real
 * sidecar; the other window is a separate node process holding the real lock ([LockHolder]).
 */
class CheckpointWaitTest {
    private val roots = TestRoots()
    private val workspace: Path = Files.createDirectories(roots.base.resolve("workspace"))
    private var model: ModelServer? = null
    private val closing = mutableListOf<AutoCloseable>()

    @AfterEach
    fun stop() {
        closing.reversed().forEach(AutoCloseable::close)
        model?.close()
    }

    @Test
    fun `the core's sentence`() {
        assertEquals(
            "Checkpoints are waiting for another Dline window using this workspace's checkpoints (process 4242).",
            CheckpointWait.sentence(4242),
        )
    }

    @Test
    fun `an action waiting for another window holding the checkpoints tells once, by its process, until its calls answer`() = runBlocking {
        val done = """{"toolCalls": [{"name": "attempt_completion", "input": {"result": "Done."}}]}"""
        model = ModelServer.start(roots.base, """{"turns": [$done]}""")
        Files.writeString(workspace.resolve("readme.txt"), "kept\n")
        val dline = SidecarHarness(roots).also(closing::add).dline
        dline.system.initialize("junit", "1", listOf(workspace.toString()))
        val profile = dline.settings.upsertProfile(
            Profile.newBuilder().setName("Scripted").setProvider("anthropic").setBaseUrl(model!!.url)
                .setModel("claude-scripted").setContextWindow(200_000).build(),
        )
        dline.settings.setSecret(profile.id, "api_key", "test-key")
        val taskId = coroutineScope {
            val taskId = dline.tasks.newTask(workspace.toString(), "One", profile.id)
            val events = EventCollector(this, dline.tasks.subscribe(taskId))
            events.await("completion", 60.seconds) {
                it.hasStatusChanged() && it.statusChanged.status == TaskStatus.TASK_STATUS_COMPLETED
            }
            events.cancel()
            taskId
        }
        val checkpoint = dline.checkpoints.list(taskId).first()

        val holder = LockHolder.start(roots, workspace).also(closing::add)
        val shown = CopyOnWriteArrayList<String>()
        val ended = AtomicBoolean(false)
        val restore = CheckpointHeldElsewhere(dline.checkpoints, taskId) { sentence ->
            shown += sentence
            AutoCloseable { ended.set(true) }
        }
        coroutineScope {
            // A restore's calls: its list and the Compare of its question, both waiting.
            val listing = async { restore.during { dline.checkpoints.list(taskId) } }
            val comparing = async { restore.during { dline.checkpoints.compare(taskId, checkpoint.id) } }
            withTimeout(60.seconds) { while (shown.isEmpty()) delay(50) }
            assertEquals(listOf(CheckpointWait.sentence(holder.pid.toInt())), shown.toList())
            assertFalse(listing.isCompleted || comparing.isCompleted, "the calls wait")
            assertFalse(ended.get(), "shown while they wait")

            // The other window goes (killed: its lock is taken over at once); the calls answer.
            holder.close()
            assertTrue(listing.await().any { it.id == checkpoint.id })
            comparing.await()
        }
        assertEquals(1, shown.size, "told once: $shown")
        assertTrue(ended.get(), "no longer shown once the call answered")

        // Nothing holds them now: the status names no process, the next action tells nothing.
        assertEquals(0, dline.checkpoints.status(taskId).waitingForPid)
        val next = CheckpointHeldElsewhere(dline.checkpoints, taskId) { sentence ->
            shown += sentence
            AutoCloseable {}
        }
        next.during { dline.checkpoints.compare(taskId, checkpoint.id) }
        assertEquals(1, shown.size, "nothing more told: $shown")
    }
}
