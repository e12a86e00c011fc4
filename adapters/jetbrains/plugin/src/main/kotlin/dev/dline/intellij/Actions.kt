package dev.dline.intellij

import com.intellij.openapi.actionSystem.AnAction
import com.intellij.openapi.actionSystem.AnActionEvent
import com.intellij.openapi.application.EDT
import com.intellij.openapi.ui.Messages
import dev.dline.client.CheckpointDiff
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext

class NewTaskAction : AnAction() {
    override fun actionPerformed(e: AnActionEvent) {
        val project = e.project ?: return
        val text = Messages.showMultilineInputDialog(project, "What should Dline do?", "New Dline Task", "", null, null)
        if (!text.isNullOrBlank()) DlineProjectService.of(project).startTask(text)
    }
}

class ViewChangesAction : AnAction() {
    override fun actionPerformed(e: AnActionEvent) {
        val project = e.project ?: return
        val service = DlineProjectService.of(project)
        val taskId = service.currentTaskId ?: run {
            service.notify("Open a task first.")
            return
        }
        service.scope.launch {
            service.guarded {
                val changes = service.checkpointWait(taskId).during { service.dline.checkpoints.viewChanges(taskId) }
                val diff = CheckpointDiff.ofViewChanges(changes)
                withContext(Dispatchers.EDT) { showDiff(project, diff) }
            }
        }
    }
}

class RestartCoreAction : AnAction() {
    override fun actionPerformed(e: AnActionEvent) {
        val project = e.project ?: return
        DlineProjectService.of(project).restartCore()
    }
}
