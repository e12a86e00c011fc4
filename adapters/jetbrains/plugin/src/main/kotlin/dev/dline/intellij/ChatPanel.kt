package dev.dline.intellij

import com.intellij.openapi.application.EDT
import com.intellij.ui.components.JBList
import com.intellij.ui.components.JBScrollPane
import com.intellij.ui.components.JBTextArea
import dev.dline.client.AskKind
import dev.dline.client.ChatState
import dev.dline.client.UiMessage
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import java.awt.BorderLayout
import java.awt.FlowLayout
import javax.swing.DefaultListModel
import javax.swing.JButton
import javax.swing.JLabel
import javax.swing.JPanel

/** Streamed messages, the pending ask with its buttons, and the input box. */
class ChatPanel(private val service: DlineProjectService) : DlinePanel {
    private val messages = DefaultListModel<UiMessage>()
    private val askLabel = JLabel()
    private val approve = JButton("Approve").apply { addActionListener { service.respond(true, input.text.also { input.text = "" }) } }
    private val deny = JButton("Deny").apply { addActionListener { service.respond(false, input.text.also { input.text = "" }) } }
    private val askBar = JPanel(FlowLayout(FlowLayout.LEFT)).apply { add(askLabel); add(approve); add(deny); isVisible = false }
    private val input = JBTextArea(3, 40)
    private val send = JButton("Send").apply {
        addActionListener {
            val text = input.text.trim()
            if (text.isNotEmpty()) service.send(text).also { input.text = "" }
        }
    }
    private val cancel = JButton("Cancel").apply { addActionListener { service.cancel() } }

    override val component = JPanel(BorderLayout()).apply {
        add(JBScrollPane(JBList(messages).apply { cellRenderer = MessageRenderer() }), BorderLayout.CENTER)
        add(
            JPanel(BorderLayout()).apply {
                add(askBar, BorderLayout.NORTH)
                add(JBScrollPane(input), BorderLayout.CENTER)
                add(JPanel().apply { add(send); add(cancel) }, BorderLayout.EAST)
            },
            BorderLayout.SOUTH,
        )
    }

    private val job = service.scope.launch(Dispatchers.EDT) { service.chat.collect(::render) }

    private fun render(state: ChatState) {
        messages.clear()
        state.messages.forEach(messages::addElement)
        val ask = state.pendingAsk
        askBar.isVisible = ask != null
        if (ask != null) {
            askLabel.text = ask.summary
            val question = ask.kind == AskKind.ASK_KIND_FOLLOWUP || ask.kind == AskKind.ASK_KIND_COMPLETION
            approve.text = if (question) "Answer" else "Approve"
            deny.isVisible = !question
        }
    }

    override fun dispose() = job.cancel()
}

private class MessageRenderer : javax.swing.ListCellRenderer<UiMessage> {
    private val area = JBTextArea().apply { lineWrap = true; wrapStyleWord = true }

    override fun getListCellRendererComponent(
        list: javax.swing.JList<out UiMessage>, value: UiMessage, index: Int, selected: Boolean, focused: Boolean,
    ): java.awt.Component = area.apply {
        val who = value.role.name.removePrefix("MESSAGE_ROLE_").lowercase()
        val marker = if (value.checkpointId.isNotEmpty()) "  [Checkpoint]" else ""
        text = "$who: ${value.text}${if (value.partial) " …" else ""}$marker"
        background = if (selected) list.selectionBackground else list.background
    }
}
