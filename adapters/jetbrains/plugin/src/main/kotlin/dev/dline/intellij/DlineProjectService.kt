package dev.dline.intellij

import com.intellij.ide.plugins.PluginManagerCore
import com.intellij.notification.Notification
import com.intellij.notification.NotificationAction
import com.intellij.notification.NotificationGroupManager
import com.intellij.notification.NotificationType
import com.intellij.openapi.Disposable
import com.intellij.openapi.application.ApplicationInfo
import com.intellij.openapi.application.ApplicationManager
import com.intellij.openapi.application.EDT
import com.intellij.openapi.application.PathManager
import com.intellij.openapi.components.Service
import com.intellij.openapi.components.service
import com.intellij.openapi.extensions.PluginId
import com.intellij.openapi.options.ShowSettingsUtil
import com.intellij.openapi.project.Project
import com.intellij.openapi.ui.Messages
import com.intellij.openapi.util.text.StringUtil
import dev.dline.client.ChatState
import dev.dline.client.CheckpointHeldElsewhere
import dev.dline.client.CheckpointRepairNotices
import dev.dline.client.DlineClient
import dev.dline.client.DlineException
import dev.dline.client.ErrorReason
import dev.dline.client.SidecarLaunch
import dev.dline.client.SidecarLocator
import dev.dline.client.SidecarState
import dev.dline.client.SidecarSupervisor
import dev.dline.client.VisibleText
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.asStateFlow
import kotlinx.coroutines.flow.update
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import java.nio.file.Path

/**
 * One Dline core per project window. The supervisor and the client are made at once and start
 * nothing: the core starts with the first call, finding the binary for this OS and architecture
 * is part of that start (a missing one shows as the Failed state with the reason), and closing
 * the project stops a core only if one runs. Holds the chat of the task shown in the tool window.
 * Every decision lives in the client library; this is wiring.
 */
@Service(Service.Level.PROJECT)
class DlineProjectService(private val project: Project, val scope: CoroutineScope) : Disposable {
    private val projectDir: Path? = project.basePath?.let(Path::of)

    val supervisor = SidecarSupervisor({
        val bin = PluginManagerCore.getPlugin(PluginId.getId(PLUGIN_ID))?.pluginPath?.resolve("bin")
        SidecarLaunch(
            binary = SidecarLocator(bundledBin = bin, searchFrom = projectDir).locate(),
            workingDirectory = projectDir,
            stderrLog = Path.of(PathManager.getLogPath(), "dline-core-${project.locationHash}.log"),
        )
    })

    val dline = DlineClient(supervisor)

    private val _chat = MutableStateFlow(ChatState())
    val chat: StateFlow<ChatState> = _chat.asStateFlow()

    @Volatile
    var currentTaskId: String? = null
        private set
    private var subscription: Job? = null

    /** Checkpoints the core repaired (an index rebuilt, HEAD put back) are told once per sentence in this window. */
    private val repairNotices = CheckpointRepairNotices()

    val workspaceRoot: String get() = project.basePath ?: ""

    init {
        watchSidecar()
    }

    /** Tells every new sidecar who we are and which folder is open; reports a give-up. */
    private fun watchSidecar() = scope.launch {
        supervisor.state.collect { state ->
            when (state) {
                is SidecarState.Ready -> guarded {
                    dline.system.initialize("JetBrains", ApplicationInfo.getInstance().fullVersion, listOfNotNull(project.basePath))
                }

                is SidecarState.Failed -> notify(state.reason, NotificationType.ERROR)

                else -> Unit
            }
        }
    }

    fun startTask(text: String) = scope.launch {
        guarded { show(dline.tasks.newTask(workspaceRoot, text)) }
    }

    /** Shows a task: its stored chat first, then its live events after that point. */
    fun show(taskId: String) {
        subscription?.cancel()
        currentTaskId = taskId
        subscription = scope.launch {
            guarded {
                val task = dline.tasks.get(taskId)
                _chat.value = ChatState.of(task)
                launch { tellRepairOf(taskId) }
                dline.tasks.subscribe(taskId, afterSeq = task.lastSeq).collect { event ->
                    _chat.update { it.apply(event) }
                    if (event.hasCheckpointStatus()) {
                        tellRepair(
                            repairNotices.toTell(event.checkpointStatus.state, event.checkpointStatus.message),
                        )
                    }
                }
            }
        }
    }

    /** The task's checkpoints as GetStatus says (a repair done before this window opened the task). */
    private suspend fun tellRepairOf(taskId: String) {
        val status = try {
            dline.checkpoints.status(taskId = taskId)
        } catch (_: DlineException) {
            return // the task's own calls say what is wrong; a status read that failed tells no repair
        }
        tellRepair(repairNotices.toTell(status))
    }

    /** Ready after the core repaired the checkpoint store: its sentence, where the damaged files were kept. */
    private fun tellRepair(note: String?) {
        if (note != null) notify(StringUtil.escapeXmlEntities(VisibleText.line(note)))
    }

    /** Sends the words to the current task (or starts one); [onAccepted] runs on the EDT once the core took them. */
    fun send(text: String, onAccepted: () -> Unit = {}) = scope.launch {
        val taskId = currentTaskId
        guarded {
            if (taskId == null) {
                show(dline.tasks.newTask(workspaceRoot, text))
            } else {
                inFolderIfNeeded(taskId) { folder -> dline.tasks.sendMessage(taskId, text, folder) }
            }
            withContext(Dispatchers.EDT) { onAccepted() }
        }
    }

    /**
     * Runs [call] for task [taskId]; if the core refuses because the task has no folder on this
     * machine (imported without one, made elsewhere), asks whether to continue it in this project's
     * folder and calls again with it. Declining leaves the refusal to [guarded].
     */
    private suspend fun inFolderIfNeeded(taskId: String, call: suspend (folder: String) -> Unit) {
        try {
            call("")
        } catch (e: DlineException) {
            if (e.reason != ErrorReason.ERROR_REASON_NO_WORKSPACE || workspaceRoot.isEmpty()) throw e
            val answer = withContext(Dispatchers.EDT) {
                Messages.showYesNoDialog(project, "${e.message}\n\nContinue it in $workspaceRoot?", "Dline", Messages.getQuestionIcon())
            }
            if (answer != Messages.YES) throw e
            call(workspaceRoot)
        }
    }

    fun respond(approve: Boolean, text: String = "") = scope.launch {
        val taskId = currentTaskId ?: return@launch
        val ask = chat.value.pendingAsk ?: return@launch
        guarded { dline.tasks.respond(taskId, ask.askId, approve, text) }
    }

    fun cancel() = scope.launch { currentTaskId?.let { guarded { dline.tasks.cancel(it) } } }

    /** "Restart Dline Core": a fresh core even while one runs (the chat's stream resumes on it). */
    fun restartCore() {
        ApplicationManager.getApplication().executeOnPooledThread { supervisor.restart() }
    }

    /** Runs a call, turning its DlineException into a notification with the core's sentence. */
    suspend fun guarded(block: suspend () -> Unit) {
        try {
            block()
        } catch (e: DlineException) {
            if (e.reason == ErrorReason.ERROR_REASON_NO_MODEL) offerModelSetup(e.message) else notify(e.message, NotificationType.ERROR)
        }
    }

    /** No model is configured: the core's sentence with the way out, Dline's settings page. */
    private fun offerModelSetup(text: String) {
        NotificationGroupManager.getInstance().getNotificationGroup("Dline").createNotification(text, NotificationType.WARNING)
            .addAction(
                NotificationAction.createSimpleExpiring("Set Up a Model") {
                    ShowSettingsUtil.getInstance().showSettingsDialog(project, DlineConfigurable::class.java)
                },
            )
            .notify(project)
    }

    /**
     * One checkpoint action's wait for another Dline window holding the workspace's checkpoints:
     * the core's sentence, naming that window's process, as a notification that expires when the
     * action's call answers (the client's CheckpointHeldElsewhere, tested against the real lock).
     */
    fun checkpointWait(taskId: String) = CheckpointHeldElsewhere(dline.checkpoints, taskId) { sentence ->
        val notice = notify(StringUtil.escapeXmlEntities(sentence))
        AutoCloseable { notice.expire() }
    }

    /** Shows a notification of the "Dline" group; the caller may expire it. */
    fun notify(text: String, type: NotificationType = NotificationType.INFORMATION): Notification =
        NotificationGroupManager.getInstance().getNotificationGroup("Dline").createNotification(text, type)
            .also { it.notify(project) }

    override fun dispose() {
        // Closing stdin lets the core flush; it may take a moment, so not on the UI thread. A core
        // that never started stays unstarted.
        ApplicationManager.getApplication().executeOnPooledThread { supervisor.stop() }
    }

    companion object {
        const val PLUGIN_ID = "dev.dline.intellij"

        fun of(project: Project): DlineProjectService = project.service()
    }
}
