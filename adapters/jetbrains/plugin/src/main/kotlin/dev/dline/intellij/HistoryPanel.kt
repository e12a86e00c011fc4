package dev.dline.intellij

import com.intellij.openapi.application.EDT
import com.intellij.ui.SimpleListCellRenderer
import com.intellij.ui.components.JBList
import com.intellij.ui.components.JBScrollPane
import dev.dline.client.DeleteMode
import dev.dline.client.RowLabels
import dev.dline.client.TaskSummary
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import java.awt.BorderLayout
import java.awt.event.MouseAdapter
import java.awt.event.MouseEvent
import javax.swing.DefaultListModel
import javax.swing.JButton
import javax.swing.JPanel

/** This project's tasks, refreshed whenever the history changes (in any window's core). */
class HistoryPanel(private val service: DlineProjectService) : DlinePanel {
    private val tasks = DefaultListModel<TaskSummary>()
    private val list = JBList(tasks).apply {
        // SimpleListCellRenderer paints the selection, so the row Open/Favorite/Delete act on shows.
        cellRenderer = SimpleListCellRenderer.create("") { task: TaskSummary -> RowLabels.task(task) }
        addMouseListener(object : MouseAdapter() {
            override fun mouseClicked(e: MouseEvent) {
                if (e.clickCount == 2) selectedValue?.let { service.show(it.id) }
            }
        })
    }

    override val component = JPanel(BorderLayout()).apply {
        add(JBScrollPane(list), BorderLayout.CENTER)
        add(
            JPanel().apply {
                add(JButton("Open").apply { addActionListener { list.selectedValue?.let { service.show(it.id) } } })
                add(
                    JButton("Favorite").apply {
                        addActionListener {
                            list.selectedValue?.let { t ->
                                service.scope.launch { service.guarded { service.dline.history.setFavorite(t.id, !t.favorite) } }
                            }
                        }
                    },
                )
                add(
                    JButton("Delete").apply {
                        addActionListener {
                            list.selectedValue?.let { t ->
                                service.scope.launch {
                                    service.guarded { service.dline.tasks.delete(DeleteMode.DELETE_MODE_SELECTED, listOf(t.id)) }
                                }
                            }
                        }
                    },
                )
            },
            BorderLayout.SOUTH,
        )
    }

    private val job = service.scope.launch {
        reload()
        service.guarded { service.dline.history.watch().collect { reload() } }
    }

    private suspend fun reload() = service.guarded {
        val page = service.dline.history.list(workspaceRoot = service.workspaceRoot, pageSize = 200).tasksList
        withContext(Dispatchers.EDT) {
            val selectedId = list.selectedValue?.id
            tasks.clear()
            page.forEach(tasks::addElement)
            page.indexOfFirst { it.id == selectedId }.takeIf { it >= 0 }?.let { list.selectedIndex = it }
        }
    }

    override fun dispose() = job.cancel()
}
