package dev.dline.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.minutes
import kotlin.time.Duration.Companion.seconds

class RestartPolicyTest {
    private var nowNanos = 0L
    private val policy =
        RestartPolicy(maxRestarts = 3, window = 1.minutes, initialBackoff = 100.milliseconds, maxBackoff = 300.milliseconds)
    private val tracker = RestartPolicy.Tracker(policy) { nowNanos }

    @Test
    fun `backs off exponentially up to the cap, then gives up past the limit within the window`() {
        assertEquals(RestartPolicy.Decision.Restart(100.milliseconds, 1), tracker.onDeath())
        nowNanos += 1.seconds.inWholeNanoseconds
        assertEquals(RestartPolicy.Decision.Restart(200.milliseconds, 2), tracker.onDeath())
        nowNanos += 1.seconds.inWholeNanoseconds
        assertEquals(RestartPolicy.Decision.Restart(300.milliseconds, 3), tracker.onDeath())
        nowNanos += 1.seconds.inWholeNanoseconds
        val giveUp = tracker.onDeath()
        assertTrue(giveUp is RestartPolicy.Decision.GiveUp, "$giveUp")
        assertTrue((giveUp as RestartPolicy.Decision.GiveUp).reason.contains("4 times"))
    }

    @Test
    fun `forgets deaths older than the window`() {
        repeat(3) { tracker.onDeath() }
        nowNanos += 2.minutes.inWholeNanoseconds
        assertEquals(RestartPolicy.Decision.Restart(100.milliseconds, 1), tracker.onDeath())
    }

    @Test
    fun `a manual reset starts counting again`() {
        repeat(4) { tracker.onDeath() }
        tracker.reset()
        assertEquals(RestartPolicy.Decision.Restart(100.milliseconds, 1), tracker.onDeath())
    }
}
