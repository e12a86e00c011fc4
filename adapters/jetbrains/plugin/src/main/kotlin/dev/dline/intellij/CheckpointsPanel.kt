package dev.dline.intellij

import com.intellij.diff.DiffContentFactory
import com.intellij.diff.DiffDialogHints
import com.intellij.diff.DiffManager
import com.intellij.diff.chains.SimpleDiffRequestChain
import com.intellij.diff.requests.SimpleDiffRequest
import com.intellij.openapi.actionSystem.AnAction
import com.intellij.openapi.actionSystem.AnActionEvent
import com.intellij.openapi.actionSystem.DefaultActionGroup
import com.intellij.openapi.application.EDT
import com.intellij.openapi.fileTypes.FileTypeManager
import com.intellij.openapi.project.Project
import com.intellij.openapi.ui.popup.JBPopupFactory
import com.intellij.ui.SimpleListCellRenderer
import com.intellij.ui.components.JBList
import com.intellij.ui.components.JBScrollPane
import dev.dline.client.Checkpoint
import dev.dline.client.CheckpointDiff
import dev.dline.client.CheckpointKind
import dev.dline.client.RestoreMenu
import dev.dline.client.RestoreSummary
import dev.dline.client.RowLabels
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.flow.distinctUntilChanged
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import java.awt.BorderLayout
import javax.swing.DefaultListModel
import javax.swing.JButton
import javax.swing.JPanel

/**
 * The current task's checkpoints: Compare in IntelliJ's diff viewer, View Changes of a selected
 * completion, Restore with the menu of docs/checkpoints.md.
 */
class CheckpointsPanel(private val project: Project, private val service: DlineProjectService) : DlinePanel {
    private val checkpoints = DefaultListModel<Checkpoint>()
    private val list = JBList(checkpoints).apply {
        cellRenderer = SimpleListCellRenderer.create("") { c: Checkpoint -> RowLabels.checkpoint(c) }
    }
    private val restore = JButton("Restore")

    override val component = JPanel(BorderLayout()).apply {
        add(JBScrollPane(list), BorderLayout.CENTER)
        add(
            JPanel().apply {
                add(JButton("Compare").apply { addActionListener { list.selectedValue?.let(::compare) } })
                add(JButton("View Changes").apply { addActionListener { list.selectedValue?.let(::viewChanges) } })
                add(restore.apply { addActionListener { list.selectedValue?.let(::showRestoreMenu) } })
            },
            BorderLayout.SOUTH,
        )
    }

    private val job = service.scope.launch {
        service.chat.map { it.checkpointIds to it.status }.distinctUntilChanged().collect { reload() }
    }

    private suspend fun reload() {
        val taskId = service.currentTaskId ?: return
        service.guarded {
            val all = service.dline.checkpoints.list(taskId)
            withContext(Dispatchers.EDT) {
                val selectedId = list.selectedValue?.id
                checkpoints.clear()
                all.forEach(checkpoints::addElement)
                all.indexOfFirst { it.id == selectedId }.takeIf { it >= 0 }?.let { list.selectedIndex = it }
            }
        }
    }

    private fun compare(checkpoint: Checkpoint) {
        val taskId = service.currentTaskId ?: return
        service.scope.launch {
            service.guarded {
                val compared = service.checkpointWait(taskId).during { service.dline.checkpoints.compare(taskId, checkpoint.id) }
                val diff = CheckpointDiff.ofCompare(compared)
                withContext(Dispatchers.EDT) { showDiff(project, diff) }
            }
        }
    }

    /** "New changes" of the selected completion (not the latest's): what it changed since the completion before it. */
    private fun viewChanges(checkpoint: Checkpoint) {
        val taskId = service.currentTaskId ?: return
        if (checkpoint.kind != CheckpointKind.CHECKPOINT_KIND_COMPLETION) {
            service.notify("View Changes shows what a completion changed: select a completion checkpoint.")
            return
        }
        service.scope.launch {
            service.guarded {
                val changes = service.checkpointWait(taskId).during {
                    service.dline.checkpoints.viewChanges(taskId, checkpointId = checkpoint.id)
                }
                val diff = CheckpointDiff.ofViewChanges(changes)
                withContext(Dispatchers.EDT) { showDiff(project, diff) }
            }
        }
    }

    /** The options RestoreMenu gives: Restore Files & Task first, the two others under "More options"; "Undo restore" for a before-restore checkpoint. */
    private fun showRestoreMenu(checkpoint: Checkpoint) {
        val taskId = service.currentTaskId ?: return
        val group = DefaultActionGroup()
        val more = DefaultActionGroup(RestoreMenu.MORE_OPTIONS, true)
        for (option in RestoreMenu.optionsFor(checkpoint)) {
            val action = object : AnAction(option.title, option.text, null) {
                override fun actionPerformed(e: AnActionEvent) {
                    service.scope.launch {
                        service.guarded {
                            val result = service.checkpointWait(taskId).during {
                                service.dline.checkpoints.restore(taskId, checkpoint.id, option.mode)
                            }
                            if (result.fileError.isNotEmpty()) {
                                service.notify(
                                    result.fileError,
                                    com.intellij.notification.NotificationType.ERROR,
                                )
                            } else {
                                // What it did, and each file it kept as it was (an ignored .env a
                                // command changed stays as the command left it): a warning then.
                                service.notify(
                                    com.intellij.openapi.util.text.StringUtil.escapeXmlEntities(RestoreSummary.of(result))
                                        .replace("\n", "<br>"),
                                    if (result.keptPathsCount > 0) {
                                        com.intellij.notification.NotificationType.WARNING
                                    } else {
                                        com.intellij.notification.NotificationType.INFORMATION
                                    },
                                )
                            }
                            reload()
                        }
                    }
                }

                override fun update(e: AnActionEvent) {
                    e.presentation.isEnabled = option.enabled
                }

                override fun getActionUpdateThread() = com.intellij.openapi.actionSystem.ActionUpdateThread.EDT
            }
            if (option.underMoreOptions) more.add(action) else group.add(action)
        }
        if (more.childrenCount > 0) group.add(more)
        JBPopupFactory.getInstance()
            .createActionGroupPopup(
                "Restore",
                group,
                com.intellij.openapi.actionSystem.DataContext.EMPTY_CONTEXT,
                JBPopupFactory.ActionSelectionAid.SPEEDSEARCH,
                true,
            )
            .showUnderneathOf(restore)
    }

    override fun dispose() = job.cancel()
}

/** Opens a multi-file diff ("Changes since snapshot" / "New changes") in IntelliJ's DiffManager. */
fun showDiff(project: Project, diff: CheckpointDiff) {
    if (diff.entries.isEmpty()) {
        com.intellij.openapi.ui.Messages.showInfoMessage(project, "No changes.", diff.title)
        return
    }
    val contents = DiffContentFactory.getInstance()
    val requests = diff.entries.map { entry ->
        val type = FileTypeManager.getInstance().getFileTypeByFileName(entry.path)
        SimpleDiffRequest(
            entry.titleIn(diff.title),
            contents.create(project, entry.before, type),
            contents.create(project, entry.after, type),
            "Checkpoint",
            "Workspace",
        )
    }
    DiffManager.getInstance().showDiff(project, SimpleDiffRequestChain(requests), DiffDialogHints.DEFAULT)
}
