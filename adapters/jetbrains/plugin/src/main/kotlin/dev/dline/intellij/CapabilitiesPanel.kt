package dev.dline.intellij

import com.intellij.openapi.application.EDT
import com.intellij.ui.SimpleListCellRenderer
import com.intellij.ui.components.JBLabel
import com.intellij.ui.components.JBList
import com.intellij.ui.components.JBScrollPane
import dev.dline.client.CapabilitiesPresenter
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import java.awt.BorderLayout
import javax.swing.DefaultListModel
import javax.swing.JButton
import javax.swing.JPanel

/**
 * Rules, workflows, skills, subagents, hooks and MCP servers of this project with their
 * toggles (workspace scope). Only renders [CapabilitiesPresenter] (tested in the client module).
 * Making it calls nothing: a core that cannot start shows as an error when the list loads.
 */
class CapabilitiesPanel(private val service: DlineProjectService) : DlinePanel {
    private val presenter = CapabilitiesPresenter(service.dline.settings, service.workspaceRoot)
    private val rows = DefaultListModel<CapabilitiesPresenter.Row>()
    private val list = JBList(rows).apply {
        cellRenderer = SimpleListCellRenderer.create { label, row: CapabilitiesPresenter.Row, _ ->
            label.text = row.label
            label.toolTipText = row.sourcePath
        }
    }
    private val notice = JBLabel()
    private val trustButton = JButton("Trust this project").apply {
        toolTipText = "Let the project's .agents/hooks and .agents/mcp servers run"
        addActionListener { act { presenter.trust(!presenter.view.value.workspaceTrusted) } }
    }

    override val component = JPanel(BorderLayout()).apply {
        add(notice, BorderLayout.NORTH)
        add(JBScrollPane(list), BorderLayout.CENTER)
        add(
            JPanel().apply {
                add(JButton("Toggle").apply { addActionListener { list.selectedValue?.let { row -> act { presenter.toggle(row) } } } })
                add(JButton("Inherit").apply { addActionListener { list.selectedValue?.let { row -> act { presenter.inherit(row) } } } })
                add(JButton("Refresh").apply { addActionListener { act { presenter.refresh(connectMcp = true) } } })
                add(trustButton)
            },
            BorderLayout.SOUTH,
        )
    }

    private val job = service.scope.launch {
        service.guarded { presenter.refresh() }
        presenter.view.collect { view ->
            withContext(Dispatchers.EDT) {
                val selected = list.selectedIndex
                rows.clear()
                view.rows.forEach(rows::addElement)
                if (selected in 0 until rows.size()) list.selectedIndex = selected
                notice.text = buildString {
                    if (view.needsTrust) append("This project's hooks and MCP servers do not run until you trust it. ")
                    view.problems.forEach { append("⚠ ").append(it).append(' ') }
                }
                trustButton.text = if (view.workspaceTrusted) "Stop trusting this project" else "Trust this project"
            }
        }
    }

    private fun act(block: suspend () -> Unit) {
        service.scope.launch { service.guarded { block() } }
    }

    override fun dispose() = job.cancel()
}
