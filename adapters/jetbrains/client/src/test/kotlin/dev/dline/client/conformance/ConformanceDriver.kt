package dev.dline.client.conformance

import dev.dline.client.AskKind
import dev.dline.client.DeleteMode
import dev.dline.client.DlineClient
import dev.dline.client.Profile
import dev.dline.client.RestoreMode
import dev.dline.client.SidecarLaunch
import dev.dline.client.SidecarLocator
import dev.dline.client.SidecarSupervisor
import dev.dline.client.TaskStatus
import dline.v1.CheckpointOuterClass.CheckpointKind
import dline.v1.CheckpointOuterClass.EditMessageMode
import dline.v1.Task.MessageRole
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import java.nio.file.Files
import java.nio.file.Path
import kotlin.system.exitProcess
import kotlin.time.Duration.Companion.seconds

/**
 * The Kotlin driver of test/conformance: plays the scenario through the Kotlin client the way
 * the JetBrains plugin does (approve every tool, answer a follow-up with its first option,
 * Compare with the baseline, Restore Files Only, edit the last message sent with Restore All), or
 * deletes the task. Run by test/jetbrains/kotlin-driver.ts as its own JVM, with the isolated
 * roots in its environment and DLINE_CONFORMANCE_* variables; writes its result as JSON to
 * DLINE_CONFORMANCE_OUT.
 */
object ConformanceDriver {
    private fun env(name: String): String = System.getenv(name) ?: error("$name is not set")

    @JvmStatic
    fun main(args: Array<String>) {
        val workspace = env("DLINE_CONFORMANCE_WORKSPACE")
        val supervisor = SidecarSupervisor(
            SidecarLaunch(
                binary = SidecarLocator().locate(),
                workingDirectory = Path.of(workspace),
                stderrLog = Path.of(env("DLINE_CONFORMANCE_OUT") + ".sidecar.stderr"),
            ),
        )
        val dline = DlineClient(supervisor)
        val result = try {
            runBlocking {
                dline.system.initialize("conformance-kotlin", "1", listOf(workspace))
                when (env("DLINE_CONFORMANCE_PHASE")) {
                    "play" -> play(dline, workspace)

                    "delete" -> {
                        val taskId = env("DLINE_CONFORMANCE_TASK")
                        dline.tasks.delete(DeleteMode.DELETE_MODE_SELECTED, listOf(taskId))
                        """{"deleted":${json(taskId)}}"""
                    }

                    else -> error("unknown phase")
                }
            }
        } catch (e: Exception) {
            e.printStackTrace()
            supervisor.stop()
            exitProcess(1)
        }
        // Closing stdin lets the sidecar flush before the snapshot is taken.
        supervisor.stop()
        Files.writeString(Path.of(env("DLINE_CONFORMANCE_OUT")), result)
        exitProcess(0)
    }

    private suspend fun play(dline: DlineClient, workspace: String): String {
        // The profile the CLI derives from OPENAI_BASE_URL / OPENAI_MODEL / OPENAI_API_KEY.
        dline.settings.upsertProfile(
            Profile.newBuilder().setId("env-openai").setName("OpenAI-compatible (from environment)").setProvider("openai")
                .setBaseUrl(env("DLINE_CONFORMANCE_MODEL_URL")).setModel(env("DLINE_CONFORMANCE_MODEL")).setContextWindow(128_000).build(),
        )
        dline.settings.setSecret("env-openai", "api_key", env("DLINE_CONFORMANCE_KEY"))
        val taskId = dline.tasks.newTask(workspace, env("DLINE_CONFORMANCE_PROMPT"), "env-openai")
        withTimeout(120.seconds) {
            dline.tasks.subscribe(taskId).first { event ->
                if (event.hasAsk()) {
                    val ask = event.ask
                    when (ask.kind) {
                        AskKind.ASK_KIND_FOLLOWUP -> dline.tasks.respond(taskId, ask.askId, approve = true, text = ask.optionsList.first())
                        else -> dline.tasks.respond(taskId, ask.askId, approve = true)
                    }
                }
                event.hasStatusChanged() && event.statusChanged.status == TaskStatus.TASK_STATUS_COMPLETED
            }
        }
        val baseline = dline.checkpoints.list(taskId).first { it.kind == CheckpointKind.CHECKPOINT_KIND_BASELINE }
        val compare = dline.checkpoints.compare(taskId, baseline.id).filesList
            .map { it.path to it.status.name.removePrefix("FILE_STATUS_").lowercase() }
            .sortedBy { it.first }
        dline.checkpoints.restore(taskId, baseline.id, RestoreMode.RESTORE_MODE_FILES)
        // Edit the last message the user sent (the follow-up answer) with Restore All.
        val last = dline.tasks.get(taskId).messagesList.last {
            it.role == MessageRole.MESSAGE_ROLE_USER && it.kind == "text" &&
                it.text.isNotEmpty()
        }
        dline.checkpoints.editMessage(taskId, last.id, env("DLINE_CONFORMANCE_EDITED_TEXT"), EditMessageMode.EDIT_MESSAGE_MODE_RESTORE_ALL)
        val files = compare.joinToString(",") { (path, status) -> """{"path":${json(path)},"status":${json(status)}}""" }
        return """{"taskId":${json(taskId)},"compare":[$files]}"""
    }

    private fun json(s: String): String = "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\""
}
