package dev.dline.client

import com.connectrpc.Code
import dline.v1.CheckpointOuterClass.CheckpointKind
import dline.v1.CheckpointOuterClass.FileStatus
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.nio.file.Files
import java.nio.file.Path
import kotlin.time.Duration.Companion.seconds

/**
 * Whole tasks through the Kotlin facade: the real sidecar runs the agent turn loop against the
 * repository's scripted model server (a separate process speaking Anthropic's SSE format).
 */
class TaskFlowTest {
    private val roots = TestRoots()
    private val workspace: Path = Files.createDirectories(roots.base.resolve("workspace"))
    private val harness = SidecarHarness(roots)
    private val dline = harness.dline
    private var model: ModelServer? = null

    @AfterEach
    fun stop() {
        harness.close()
        model?.close()
    }

    /** Model turns: write hello.txt (needs approval), then complete; then complete again (a resumed run). */
    private val script = """
        {"turns": [
          {"text": "I will create the file.", "toolCalls": [{"name": "write_to_file", "input": {"path": "hello.txt", "content": "hello from kotlin\n"}}]},
          {"toolCalls": [{"name": "attempt_completion", "input": {"result": "Created hello.txt."}}]},
          {"toolCalls": [{"name": "attempt_completion", "input": {"result": "Done after the restart."}}]}
        ]}
    """.trimIndent()

    private suspend fun startTask(script: String = this.script): String {
        model = ModelServer.start(roots.base, script)
        val profile = dline.settings.upsertProfile(
            Profile.newBuilder().setName("Scripted").setProvider("anthropic").setBaseUrl(model!!.url).setModel("claude-scripted")
                .setContextWindow(200_000).build(),
        )
        dline.settings.setSecret(profile.id, "api_key", "test-key")
        Files.writeString(workspace.resolve("readme.txt"), "kept\n")
        dline.system.initialize("junit", "1", listOf(workspace.toString()))
        return dline.tasks.newTask(workspace.toString(), "Create hello.txt", profile.id)
    }

    @Test
    fun `a task with an approval runs to completion, then compare, restore, history and delete`() = runBlocking {
        val taskId = startTask()
        coroutineScope {
            val events = EventCollector(this, dline.tasks.subscribe(taskId))
            val ask = events.await("tool approval") { it.hasAsk() }.ask
            assertEquals(AskKind.ASK_KIND_TOOL_APPROVAL, ask.kind)
            assertEquals("write_to_file", ask.tool)
            dline.tasks.respond(taskId, ask.askId, approve = true)
            events.await("completion") { it.hasStatusChanged() && it.statusChanged.status == TaskStatus.TASK_STATUS_COMPLETED }
            events.cancel()
            val seqs = events.seen.map { it.seq }
            assertEquals((1L..seqs.size).toList(), seqs, "events arrive in seq order from 1, without gaps")
            assertTrue(events.seen.any { it.hasCheckpointSaved() })
            // A window that opens the task now (GetTask, then events after its last_seq) shows
            // the same chat as one that followed every event.
            val followed = events.seen.fold(ChatState(), ChatState::apply)
            val opened = ChatState.of(dline.tasks.get(taskId))
            assertEquals(followed.messages.map { Triple(it.id, it.kind, it.text) }, opened.messages.map { Triple(it.id, it.kind, it.text) })
            assertEquals(followed.lastSeq, opened.lastSeq)
            assertEquals(TaskStatus.TASK_STATUS_COMPLETED, opened.status)
            assertEquals(null, opened.pendingAsk)
        }
        assertEquals("hello from kotlin\n", Files.readString(workspace.resolve("hello.txt")))

        val task = dline.tasks.get(taskId)
        assertEquals(TaskStatus.TASK_STATUS_COMPLETED, task.task.status)
        assertTrue(task.messagesList.any { it.kind == "completion" && it.text == "Created hello.txt." })

        // Compare the baseline with the workspace: hello.txt was added. Restore files to it: gone again.
        val checkpoints = dline.checkpoints.list(taskId)
        val baseline = checkpoints.first { it.kind == CheckpointKind.CHECKPOINT_KIND_BASELINE }
        assertTrue(checkpoints.any { it.kind == CheckpointKind.CHECKPOINT_KIND_TURN })
        val changes = dline.checkpoints.compare(taskId, baseline.id).filesList
        val hello = changes.single { it.path == "hello.txt" }
        assertEquals(FileStatus.FILE_STATUS_ADDED, hello.status)
        assertEquals("hello from kotlin\n", hello.after)
        assertTrue(changes.none { it.path == "readme.txt" })
        // View Changes of the completion named by its checkpoint, and by its message; a turn's is refused.
        val completion = checkpoints.single { it.kind == CheckpointKind.CHECKPOINT_KIND_COMPLETION }
        for (named in listOf(
            dline.checkpoints.viewChanges(taskId, checkpointId = completion.id),
            dline.checkpoints.viewChanges(taskId, messageId = completion.messageId),
        )) {
            assertEquals(completion.id, named.toCheckpointId)
            assertEquals(listOf("hello.txt"), named.filesList.map { it.path })
        }
        val turn = checkpoints.first { it.kind == CheckpointKind.CHECKPOINT_KIND_TURN }
        assertEquals(
            Code.INVALID_ARGUMENT,
            assertThrows<DlineException> {
                runBlocking { dline.checkpoints.viewChanges(taskId, turn.id) }
            }.code,
        )
        val restored = dline.checkpoints.restore(taskId, baseline.id, RestoreMode.RESTORE_MODE_FILES)
        assertTrue(restored.filesRestored, restored.fileError)
        assertEquals(listOf("hello.txt"), restored.deletedPathsList)
        assertFalse(Files.exists(workspace.resolve("hello.txt")))
        assertEquals("kept\n", Files.readString(workspace.resolve("readme.txt")))

        // The restore saved a "before restore" checkpoint; its menu is "Undo restore", which brings hello.txt back.
        val undoPoint = dline.checkpoints.list(taskId).single { it.id == restored.undoCheckpointId }
        assertEquals(CheckpointKind.CHECKPOINT_KIND_BEFORE_RESTORE, undoPoint.kind)
        val undo = RestoreMenu.optionsFor(undoPoint).single()
        assertEquals("Undo restore", undo.title)
        assertTrue(dline.checkpoints.restore(taskId, undoPoint.id, undo.mode).filesRestored)
        assertEquals("hello from kotlin\n", Files.readString(workspace.resolve("hello.txt")))

        val listed = dline.history.list(workspaceRoot = workspace.toString()).tasksList.single { it.id == taskId }
        assertEquals("Create hello.txt", listed.title)
        dline.history.setFavorite(taskId, true)
        assertTrue(dline.history.list(favoritesOnly = true).tasksList.any { it.id == taskId })

        assertEquals(listOf(taskId), dline.tasks.delete(DeleteMode.DELETE_MODE_SELECTED, listOf(taskId)))
        assertEquals(Code.NOT_FOUND, assertThrows<DlineException> { runBlocking { dline.tasks.get(taskId) } }.code)
        assertTrue(dline.history.list().tasksList.none { it.id == taskId })
    }

    @Test
    fun `Restore All asked as a dry run names what it will do and changes nothing`() = runBlocking {
        val taskId = startTask()
        coroutineScope {
            val events = EventCollector(this, dline.tasks.subscribe(taskId))
            val ask = events.await("tool approval") { it.hasAsk() }.ask
            dline.tasks.respond(taskId, ask.askId, approve = true)
            events.await("completion") { it.hasStatusChanged() && it.statusChanged.status == TaskStatus.TASK_STATUS_COMPLETED }
            events.cancel()
        }
        val before = dline.tasks.get(taskId)
        val checkpoints = dline.checkpoints.list(taskId)
        val first = before.messagesList.first { it.role == MessageRole.MESSAGE_ROLE_USER }
        val text = "Create hello.txt, please"
        val dry = dline.checkpoints.editMessage(taskId, first.id, text, EditMessageMode.EDIT_MESSAGE_MODE_RESTORE_ALL, dryRun = true)
        assertTrue(dry.restored)
        assertEquals(checkpoints.first { it.kind == CheckpointKind.CHECKPOINT_KIND_BASELINE }.id, dry.checkpointId)
        assertEquals(listOf("hello.txt"), dry.deletedPathsList)
        assertEquals("", dry.undoCheckpointId)
        // Nothing changed: the file, the messages, the checkpoints.
        assertEquals("hello from kotlin\n", Files.readString(workspace.resolve("hello.txt")))
        assertEquals(before.messagesList.map { it.id }, dline.tasks.get(taskId).messagesList.map { it.id })
        assertEquals(checkpoints, dline.checkpoints.list(taskId))

        val done = dline.checkpoints.editMessage(taskId, first.id, text, EditMessageMode.EDIT_MESSAGE_MODE_RESTORE_ALL)
        assertEquals(dry.checkpointId, done.checkpointId)
        assertEquals(dry.restoredPathsList, done.restoredPathsList)
        assertEquals(dry.deletedPathsList, done.deletedPathsList)
        assertFalse(Files.exists(workspace.resolve("hello.txt")))
        assertEquals("kept\n", Files.readString(workspace.resolve("readme.txt")))
    }

    @Test
    fun `a task restore rewinds the chat a subscriber follows to what GetTask shows`() = runBlocking {
        val taskId = startTask()
        coroutineScope {
            val events = EventCollector(this, dline.tasks.subscribe(taskId))
            val ask = events.await("tool approval") { it.hasAsk() }.ask
            dline.tasks.respond(taskId, ask.askId, approve = true)
            events.await("completion") { it.hasStatusChanged() && it.statusChanged.status == TaskStatus.TASK_STATUS_COMPLETED }
            val beforeRestore = events.seen.fold(ChatState(), ChatState::apply)
            val turn = dline.checkpoints.list(taskId).first { it.kind == CheckpointKind.CHECKPOINT_KIND_TURN && it.messageId.isNotEmpty() }
            dline.checkpoints.restore(taskId, turn.id, RestoreMode.RESTORE_MODE_TASK)
            events.await("rewind") { it.hasRewound() }
            events.cancel()
            val followed = events.seen.fold(ChatState(), ChatState::apply)
            val opened = ChatState.of(dline.tasks.get(taskId))
            assertTrue(opened.messages.size < beforeRestore.messages.size, "the restore removed messages")
            assertEquals(turn.messageId, opened.messages.last().id)
            assertEquals(opened.messages.map { it.id to it.text }, followed.messages.map { it.id to it.text })
            assertEquals(null, followed.pendingAsk)
        }
    }

    @Test
    fun `the chat shows a retry and a slow first byte while they last, and the checkpoints' state`() = runBlocking {
        // An overloaded answer (retried after 100 ms), then a first byte after 6 s (a waiting line
        // comes every 5 s), then the answer.
        val taskId = startTask(
            """
            {"turns": [
              {"status": 529, "errorMessage": "Overloaded", "retryAfterMs": "100"},
              {"firstByteDelayMs": 6000, "text": "Hello after the wait.", "toolCalls": [{"name": "attempt_completion", "input": {"result": "Greeted."}}]}
            ]}
            """.trimIndent(),
        )
        coroutineScope {
            val events = EventCollector(this, dline.tasks.subscribe(taskId))
            events.await("completion", 60.seconds) { it.hasStatusChanged() && it.statusChanged.status == TaskStatus.TASK_STATUS_COMPLETED }
            if (events.seen.none(::checkpointsReady)) events.await("checkpoints ready", predicate = ::checkpointsReady)
            events.cancel()
            // The chat after each event, as a window following the task shows it.
            val states = events.seen.runningFold(ChatState(), ChatState::apply)
            val notices = states.map { it.notice }.filter { it.isNotEmpty() }.distinct()
            assertTrue(notices.any { it.startsWith("retrying in ") }, "a retry line: $notices")
            assertTrue(notices.any { it.startsWith("waiting for the model: 5 s") }, "a waiting line: $notices")
            val last = states.last()
            assertEquals("", last.notice, "gone once the model answered")
            assertTrue(last.messages.any { it.text == "Hello after the wait." })
            assertEquals("CHECKPOINT_STATE_READY", last.checkpointProgress?.state)
            assertEquals("", last.checkpointProgress?.progressText)
        }
    }

    @Test
    fun `subscribing to a task that does not exist fails with not_found`() = runBlocking {
        val e = assertThrows<DlineException> { runBlocking { withTimeout(30.seconds) { dline.tasks.subscribe("no-such-task").first() } } }
        assertEquals(Code.NOT_FOUND, e.code)
    }

    @Test
    fun `a task stream survives a sidecar kill and resumes after the last seq`() = runBlocking {
        val taskId = startTask()
        coroutineScope {
            val events = EventCollector(this, dline.tasks.subscribe(taskId))
            events.await("tool approval") { it.hasAsk() }
            events.await("waiting status") {
                it.hasStatusChanged() && it.statusChanged.status == TaskStatus.TASK_STATUS_WAITING
            }
            // The workspace's checkpoints become ready alongside the first turn, before or after the
            // task blocks on the ask, and the baseline is told (checkpoint_saved) once saved. Once all
            // happened the old sidecar has nothing left to say; its events stay with it (a new sidecar
            // cannot replay them), so the kill comes after them.
            if (events.seen.none(::checkpointsReady)) events.await("checkpoints ready", predicate = ::checkpointsReady)
            if (events.seen.none(::baselineSaved)) events.await("the baseline told", predicate = ::baselineSaved)
            val lastBeforeKill = events.seen.maxOf { it.seq }
            val first = harness.connection()
            first.process.kill()
            withTimeout(30.seconds) {
                harness.supervisor.state.first { it is SidecarState.Ready && it.connection.generation == 2 }
            }
            // The new sidecar finds the task interrupted mid-ask; resuming it asks the same call
            // again (it never ran), and once approved the task goes on to its next model turn.
            dline.tasks.resume(taskId)
            val again = events.await("the approval asked again") { it.seq > lastBeforeKill && it.hasAsk() }.ask
            assertEquals("write_to_file", again.tool)
            dline.tasks.respond(taskId, again.askId, approve = true)
            events.await("completion after the restart") {
                it.hasStatusChanged() && it.statusChanged.status == TaskStatus.TASK_STATUS_COMPLETED
            }
            events.cancel()
            val after = events.seen.map { it.seq }.filter { it > lastBeforeKill }
            assertTrue(after.isNotEmpty())
            assertEquals(events.seen.map { it.seq }.sorted().distinct(), events.seen.map { it.seq }, "strictly increasing, no duplicates")
            // A fresh subscriber on the new sidecar, from the same seq, sees exactly what the resumed flow got.
            val fresh = EventCollector(this, dline.tasks.subscribe(taskId, afterSeq = lastBeforeKill))
            fresh.await("the same completion") { it.seq == after.last() }
            fresh.cancel()
            assertEquals(events.seen.filter { it.seq > lastBeforeKill }, fresh.seen)
        }
        assertEquals(TaskStatus.TASK_STATUS_COMPLETED, dline.tasks.get(taskId).task.status)
        assertEquals("hello from kotlin\n", Files.readString(workspace.resolve("hello.txt")))
    }
}

private fun checkpointsReady(event: TaskEvent): Boolean =
    event.hasCheckpointStatus() && event.checkpointStatus.state == "CHECKPOINT_STATE_READY"

private fun baselineSaved(event: TaskEvent): Boolean =
    event.hasCheckpointSaved() && event.checkpointSaved.kind == "CHECKPOINT_KIND_BASELINE"
