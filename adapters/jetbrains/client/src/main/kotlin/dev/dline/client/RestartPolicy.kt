package dev.dline.client

import kotlin.time.Duration
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.minutes
import kotlin.time.Duration.Companion.seconds

/**
 * When a sidecar that died is started again: at most [maxRestarts] times within [window], each
 * after a backoff that doubles from [initialBackoff] up to [maxBackoff]; past that the
 * supervisor stops and reports (a crash loop is a bug to show, not to hide). The same idea as
 * vscode-languageclient's DefaultErrorHandler.
 */
data class RestartPolicy(
    val maxRestarts: Int = 5,
    val window: Duration = 3.minutes,
    val initialBackoff: Duration = 250.milliseconds,
    val maxBackoff: Duration = 8.seconds,
) {
    init {
        require(maxRestarts >= 0) { "maxRestarts must be >= 0, got $maxRestarts" }
        require(initialBackoff <= maxBackoff) { "initialBackoff must not exceed maxBackoff" }
    }

    sealed interface Decision {
        /** Start again after [delay]; [attempt] counts the restarts within the window, from 1. */
        data class Restart(val delay: Duration, val attempt: Int) : Decision

        /** Too many deaths within the window: stop. [reason] is a sentence for the user. */
        data class GiveUp(val reason: String) : Decision
    }

    /** Tracks the deaths of one supervised sidecar. [now] is a monotonic clock in nanoseconds. */
    class Tracker(private val policy: RestartPolicy, private val now: () -> Long = System::nanoTime) {
        private val deaths = ArrayDeque<Long>()

        fun onDeath(): Decision {
            val at = now()
            deaths.addLast(at)
            while (deaths.isNotEmpty() && at - deaths.first() > policy.window.inWholeNanoseconds) deaths.removeFirst()
            val attempt = deaths.size
            if (attempt > policy.maxRestarts) {
                return Decision.GiveUp(
                    "The Dline sidecar stopped $attempt times within ${policy.window}; it will not be restarted automatically.",
                )
            }
            val factor = 1L shl (attempt - 1).coerceAtMost(20)
            val delay = (policy.initialBackoff * factor.toDouble()).coerceAtMost(policy.maxBackoff)
            return Decision.Restart(delay, attempt)
        }

        /** Forget past deaths (after the user asked for a restart by hand). */
        fun reset() = deaths.clear()
    }
}
