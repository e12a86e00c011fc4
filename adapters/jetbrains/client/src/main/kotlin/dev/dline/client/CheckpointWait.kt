package dev.dline.client

import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import java.util.concurrent.atomic.AtomicBoolean
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds

/**
 * A checkpoint call (the list, Compare, Restore, Restore All) waits while another Dline window
 * (another sidecar) holds the workspace's checkpoint repository (its baseline of a large
 * workspace, a restore), up to two minutes. The core names that window's process in GetStatus
 * (`waiting_for_pid`, answered at once); [CheckpointHeldElsewhere] asks it while a call waits, so
 * that a UI tells the person, once per action, instead of waiting in silence.
 */
object CheckpointWait {
    /** How long a call runs before the core is asked whether another window holds it up, and how often after. */
    val ASK_EVERY: Duration = 1.seconds

    /** The core's sentence (MESSAGES.waitingForLock in core/src/checkpoints/workspace-guard.ts). */
    fun sentence(pid: Int): String = "Checkpoints are waiting for another Dline window using this workspace's checkpoints (process $pid)."
}

/**
 * One action's checkpoint calls for task [taskId] (a restore: its list, its Compare, the Restore):
 * while one has not answered, the core's status is asked every [CheckpointWait.ASK_EVERY]; the
 * first time it names another process, [show] gets [CheckpointWait.sentence], once for the whole
 * action. What [show] returns is closed when that call answers (a notification expired). Then the
 * call goes on as before.
 *
 * ```
 * val waiting = CheckpointHeldElsewhere(dline.checkpoints, taskId) { sentence -> balloon(sentence) }
 * val list = waiting.during { dline.checkpoints.list(taskId) }
 * ```
 */
class CheckpointHeldElsewhere(
    private val checkpoints: CheckpointApi,
    private val taskId: String,
    private val show: (sentence: String) -> AutoCloseable,
) {
    private val told = AtomicBoolean(false)

    /** Runs one call of the action, telling while it waits for another window. */
    suspend fun <T> during(call: suspend () -> T): T = coroutineScope {
        val lock = Any()
        var answered = false
        var notice: AutoCloseable? = null
        val asking = launch {
            while (!told.get()) {
                delay(CheckpointWait.ASK_EVERY)
                // Each read in its own coroutine, not one at a time: a read that came while the other
                // window's hold was still short waits for it as the call does (the core's skip list).
                launch {
                    // A failed read says nothing: the call itself says what is wrong.
                    val pid = runCatching { checkpoints.status(taskId).waitingForPid }.getOrDefault(0)
                    if (pid != 0) {
                        synchronized(lock) {
                            if (!answered && told.compareAndSet(false, true)) notice = show(CheckpointWait.sentence(pid))
                        }
                    }
                }
            }
        }
        try {
            call()
        } finally {
            asking.cancel()
            synchronized(lock) {
                answered = true
                notice
            }?.close()
        }
    }
}
