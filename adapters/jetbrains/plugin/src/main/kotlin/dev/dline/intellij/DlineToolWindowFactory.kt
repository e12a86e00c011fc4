package dev.dline.intellij

import com.intellij.openapi.application.EDT
import com.intellij.openapi.project.DumbAware
import com.intellij.openapi.project.Project
import com.intellij.openapi.util.Disposer
import com.intellij.openapi.wm.ToolWindow
import com.intellij.openapi.wm.ToolWindowFactory
import com.intellij.ui.components.JBLabel
import com.intellij.ui.content.ContentFactory
import dev.dline.client.SidecarState
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import java.awt.BorderLayout
import javax.swing.JComponent
import javax.swing.JPanel

/** The Dline tool window: Chat, History, Checkpoints and Capabilities tabs, each under the core's status line. */
class DlineToolWindowFactory :
    ToolWindowFactory,
    DumbAware {
    override fun createToolWindowContent(project: Project, toolWindow: ToolWindow) {
        val service = DlineProjectService.of(project)
        val factory = ContentFactory.getInstance()
        val panels: List<Pair<String, DlinePanel>> =
            listOf(
                "Chat" to ChatPanel(service),
                "History" to HistoryPanel(service),
                "Checkpoints" to CheckpointsPanel(project, service),
                "Capabilities" to CapabilitiesPanel(service),
            )
        for ((title, panel) in panels) {
            val content = factory.createContent(withStatusLine(service, panel.component, panel), title, false)
            Disposer.register(content, panel)
            toolWindow.contentManager.addContent(content)
        }
    }

    private fun withStatusLine(service: DlineProjectService, body: JComponent, owner: com.intellij.openapi.Disposable): JComponent {
        val status = JBLabel()
        val job = service.scope.launch(Dispatchers.EDT) {
            service.supervisor.state.collect { state ->
                status.text = when (state) {
                    is SidecarState.Ready -> "Dline core ${state.connection.handshake.version} (pid ${state.connection.process.pid})"

                    is SidecarState.Starting -> "Starting the Dline core…"

                    is SidecarState.Restarting -> "The Dline core stopped; restarting (attempt ${state.attempt})…"

                    is SidecarState.Failed -> state.reason

                    // e.g. no dline-core for this OS: what was looked for
                    SidecarState.Stopped -> "The Dline core is stopped."

                    SidecarState.NotStarted -> ""
                }
            }
        }
        Disposer.register(owner) { job.cancel() }
        return JPanel(BorderLayout()).apply {
            add(status, BorderLayout.NORTH)
            add(body, BorderLayout.CENTER)
        }
    }
}

/** A tab of the tool window: its Swing component, disposed with the tab. */
interface DlinePanel : com.intellij.openapi.Disposable {
    val component: JComponent
}
