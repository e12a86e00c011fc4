package dev.dline.client

import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeout
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds

/** Collects a task's event flow in the background; tests wait for the event they expect. */
class EventCollector(scope: CoroutineScope, flow: Flow<TaskEvent>) {
    private val channel = Channel<TaskEvent>(Channel.UNLIMITED)
    val seen = mutableListOf<TaskEvent>()
    private val job: Job = scope.launch {
        flow.collect { channel.send(it) }
    }

    /** Receives events until one matches; returns it. Fails with the events seen if none comes in time. */
    suspend fun await(what: String, timeout: Duration = 30.seconds, predicate: (TaskEvent) -> Boolean): TaskEvent = try {
        withTimeout(timeout) {
            while (true) {
                val event = channel.receive()
                seen += event
                if (predicate(event)) return@withTimeout event
            }
            @Suppress("UNREACHABLE_CODE")
            error("unreachable")
        }
    } catch (e: kotlinx.coroutines.TimeoutCancellationException) {
        throw AssertionError("no $what within $timeout; events seen: ${seen.map(::describe)}", e)
    }

    fun cancel() = job.cancel()

    companion object {
        fun describe(event: TaskEvent): String = "${event.seq}:${event.eventCase}" +
            when {
                event.hasStatusChanged() -> "(${event.statusChanged.status} ${event.statusChanged.reason})"
                event.hasAsk() -> "(${event.ask.kind} ${event.ask.tool})"
                event.hasError() -> "(${event.error.code} ${event.error.message})"
                else -> ""
            }
    }
}
