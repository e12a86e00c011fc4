package dev.dline.intellij

import com.intellij.openapi.application.EDT
import com.intellij.ui.components.JBList
import com.intellij.ui.components.JBScrollPane
import com.intellij.ui.components.JBTextArea
import dev.dline.client.AskKind
import dev.dline.client.ChatState
import dev.dline.client.ListPatch
import dev.dline.client.RowLabels
import dev.dline.client.UiMessage
import dev.dline.client.VisibleText
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

    /** What [messages] holds: each new state is applied as a [ListPatch], so a token repaints one row. */
    private var shown: List<UiMessage> = emptyList()
    private val askLabel = JLabel()
    private val approve = JButton("Approve").apply { addActionListener { service.respond(true, input.text.also { input.text = "" }) } }
    private val deny = JButton("Deny").apply { addActionListener { service.respond(false, input.text.also { input.text = "" }) } }
    private val askBar = JPanel(FlowLayout(FlowLayout.LEFT)).apply {
        add(askLabel)
        add(approve)
        add(deny)
        isVisible = false
    }
    private val input = JBTextArea(3, 40)
    private val send = JButton("Send").apply {
        addActionListener {
            val text = input.text.trim()
            // The box empties once the core took the words: a refusal (no model yet) keeps them.
            if (text.isNotEmpty()) service.send(text) { if (input.text.trim() == text) input.text = "" }
        }
    }
    private val cancel = JButton("Cancel").apply { addActionListener { service.cancel() } }

    override val component = JPanel(BorderLayout()).apply {
        add(JBScrollPane(JBList(messages).apply { cellRenderer = MessageRenderer() }), BorderLayout.CENTER)
        add(
            JPanel(BorderLayout()).apply {
                add(askBar, BorderLayout.NORTH)
                add(JBScrollPane(input), BorderLayout.CENTER)
                add(
                    JPanel().apply {
                        add(send)
                        add(cancel)
                    },
                    BorderLayout.EAST,
                )
            },
            BorderLayout.SOUTH,
        )
    }

    private val job = service.scope.launch(Dispatchers.EDT) { service.chat.collect(::render) }

    private fun render(state: ChatState) {
        val patch = ListPatch.between(shown, state.messages) { a, b -> a.id == b.id }
        for ((index, message) in patch.changed) messages.set(index, message)
        patch.removedFrom?.let { from -> messages.removeRange(from, messages.size() - 1) }
        patch.added.forEach(messages::addElement)
        shown = state.messages
        val ask = state.pendingAsk
        askBar.isVisible = ask != null
        if (ask != null) {
            askLabel.text = VisibleText.line(ask.summary)
            val question = ask.kind == AskKind.ASK_KIND_FOLLOWUP || ask.kind == AskKind.ASK_KIND_COMPLETION
            approve.text = if (question) "Answer" else "Approve"
            deny.isVisible = !question
        }
    }

    override fun dispose() = job.cancel()
}

private class MessageRenderer : javax.swing.ListCellRenderer<UiMessage> {
    private val area = JBTextArea().apply {
        lineWrap = true
        wrapStyleWord = true
    }

    override fun getListCellRendererComponent(
        list: javax.swing.JList<out UiMessage>,
        value: UiMessage,
        index: Int,
        selected: Boolean,
        focused: Boolean,
    ): java.awt.Component = area.apply {
        text = RowLabels.message(value)
        // The selected row is the one Edit/Restore would act on: it must look selected.
        background = if (selected) list.selectionBackground else list.background
        foreground = if (selected) list.selectionForeground else list.foreground
    }
}
