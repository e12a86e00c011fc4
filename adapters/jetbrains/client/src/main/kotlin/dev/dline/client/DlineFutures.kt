package dev.dline.client

import dline.v1.CheckpointOuterClass.CompareResponse
import dline.v1.CheckpointOuterClass.EditMessageResponse
import dline.v1.CheckpointOuterClass.RestoreResponse
import dline.v1.CheckpointOuterClass.ViewChangesResponse
import dline.v1.History.ListTasksResponse
import dline.v1.System.HealthResponse
import dline.v1.System.InitializeResponse
import kotlinx.coroutines.CoroutineExceptionHandler
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.cancel
import kotlinx.coroutines.future.asCompletableFuture
import kotlinx.coroutines.future.future
import kotlinx.coroutines.launch
import java.util.concurrent.CompletableFuture
import java.util.function.Consumer

/**
 * The client for plugins written in Java: the calls of [DlineClient], each returning a
 * [CompletableFuture] that completes on a background thread (exceptionally with a
 * [DlineException], whose `getCode()` is the Connect code), and task events delivered to a
 * listener. One per project window, over that window's [SidecarSupervisor]; [close] stops the
 * sidecar (closing its stdin) and cancels what is still running.
 *
 * ```java
 * DlineFutures dline = DlineFutures.start(new SidecarLaunch(binary));
 * String taskId = dline.newTask(root, "Add a README", "").get();
 * try (DlineFutures.Subscription events = dline.subscribe(taskId, 0, event -> render(event))) { ... }
 * dline.close();
 * ```
 * For calls this class does not wrap, [client] is the Kotlin facade underneath.
 */
class DlineFutures(val supervisor: SidecarSupervisor) : AutoCloseable {
    val client = DlineClient(supervisor)

    // A failed subscription is reported through its `done` future, not as an uncaught exception.
    private val scope = CoroutineScope(SupervisorJob() + Dispatchers.IO + CoroutineExceptionHandler { _, _ -> })

    private fun <T> call(block: suspend DlineClient.() -> T): CompletableFuture<T> = scope.future { client.block() }

    val state: SidecarState get() = supervisor.state.value

    fun initialize(clientName: String, clientVersion: String, workspaceRoots: List<String>): CompletableFuture<InitializeResponse> =
        call { system.initialize(clientName, clientVersion, workspaceRoots) }

    fun health(): CompletableFuture<HealthResponse> = call { system.health() }

    /** Starts a task; an empty [profileId] uses the default profile. Completes with the task id. */
    fun newTask(workspaceRoot: String, text: String, profileId: String): CompletableFuture<String> =
        call { tasks.newTask(workspaceRoot, text, profileId) }

    fun sendMessage(taskId: String, text: String): CompletableFuture<Void?> = call {
        tasks.sendMessage(taskId, text)
        null
    }

    fun respond(taskId: String, askId: String, approve: Boolean, text: String): CompletableFuture<Void?> = call {
        tasks.respond(taskId, askId, approve, text)
        null
    }

    fun cancel(taskId: String): CompletableFuture<Void?> = call {
        tasks.cancel(taskId)
        null
    }

    fun resume(taskId: String): CompletableFuture<Void?> = call {
        tasks.resume(taskId)
        null
    }

    fun getTask(taskId: String): CompletableFuture<GetTaskResponse> = call { tasks.get(taskId) }

    fun deleteTasks(taskIds: List<String>): CompletableFuture<List<String>> = call {
        tasks.delete(DeleteMode.DELETE_MODE_SELECTED, taskIds)
    }

    fun listTasks(workspaceRoot: String): CompletableFuture<ListTasksResponse> = call { history.list(workspaceRoot = workspaceRoot) }

    fun setFavorite(taskId: String, favorite: Boolean): CompletableFuture<Void?> = call {
        history.setFavorite(taskId, favorite)
        null
    }

    fun listCheckpoints(taskId: String): CompletableFuture<List<Checkpoint>> = call { checkpoints.list(taskId) }

    fun compare(taskId: String, checkpointId: String): CompletableFuture<CompareResponse> = call {
        checkpoints.compare(taskId, checkpointId)
    }

    /** The latest completion's changes, or those of the completion [checkpointId] or [messageId] names. */
    @JvmOverloads
    fun viewChanges(taskId: String, checkpointId: String = "", messageId: String = ""): CompletableFuture<ViewChangesResponse> =
        call { checkpoints.viewChanges(taskId, checkpointId, messageId) }

    fun restore(taskId: String, checkpointId: String, mode: RestoreMode): CompletableFuture<RestoreResponse> =
        call { checkpoints.restore(taskId, checkpointId, mode) }

    /** Restore Chat / Restore All for an edited message; [dryRun]: what Restore All would do, changing nothing. */
    @JvmOverloads
    fun editMessage(
        taskId: String,
        messageId: String,
        text: String,
        mode: EditMessageMode,
        dryRun: Boolean = false,
    ): CompletableFuture<EditMessageResponse> = call { checkpoints.editMessage(taskId, messageId, text, mode, dryRun) }

    fun listProfiles(): CompletableFuture<List<Profile>> = call { settings.listProfiles() }

    fun upsertProfile(profile: Profile): CompletableFuture<Profile> = call { settings.upsertProfile(profile) }

    fun setSecret(profileId: String, name: String, value: String): CompletableFuture<Void?> = call {
        settings.setSecret(profileId, name, value)
        null
    }

    /**
     * Delivers the task's events after [afterSeq] to [listener], in order, on a background thread,
     * across sidecar restarts (as [TaskApi.subscribe]), until the subscription is closed.
     * [Subscription.done] completes when the stream ends, exceptionally if it failed.
     */
    fun subscribe(taskId: String, afterSeq: Long, listener: Consumer<TaskEvent>): Subscription {
        val job = scope.launch { client.tasks.subscribe(taskId, afterSeq).collect { listener.accept(it) } }
        return Subscription(job)
    }

    class Subscription internal constructor(private val job: Job) : AutoCloseable {
        val done: CompletableFuture<Unit> = job.asCompletableFuture()

        override fun close() = job.cancel()
    }

    /** Stops the sidecar and cancels pending calls and subscriptions. Blocking; call it off the UI thread. */
    override fun close() {
        scope.cancel()
        supervisor.stop()
    }

    companion object {
        /** A facade over a new supervisor of [launch] (the sidecar starts with the first call). */
        @JvmStatic
        fun start(launch: SidecarLaunch): DlineFutures = DlineFutures(SidecarSupervisor(launch))
    }
}
