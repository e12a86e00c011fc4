package dev.dline.client

import com.connectrpc.Code
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.nio.file.Files
import java.util.concurrent.TimeUnit
import kotlin.time.Duration.Companion.milliseconds
import kotlin.time.Duration.Companion.minutes
import kotlin.time.Duration.Companion.seconds

class SupervisorTest {
    @Test
    fun `restarts a killed sidecar on a new port with a new token, and calls work again`() = runBlocking {
        SidecarHarness().use { harness ->
            val first = harness.connection()
            assertEquals(1, first.generation)
            first.process.kill()
            val second = withTimeout(30.seconds) {
                harness.supervisor.state.first { it is SidecarState.Ready && it.connection.generation == 2 } as SidecarState.Ready
            }.connection
            assertNotEquals(first.process.pid, second.process.pid)
            assertNotEquals(first.handshake.url, second.handshake.url)
            assertNotEquals(first.handshake.token, second.handshake.token)
            assertEquals(second.process.pid, harness.dline.system.health().pid.toLong())
        }
    }

    @Test
    fun `stops the sidecar by closing its stdin, and does not restart it`() = runBlocking {
        val harness = SidecarHarness()
        val connection = harness.connection()
        harness.close()
        assertEquals(0, connection.process.exited.get(10, TimeUnit.SECONDS))
        assertEquals(SidecarState.Stopped, harness.supervisor.state.value)
    }

    @Test
    fun `once stopped, leaves no thread that keeps the JVM alive`() = runBlocking {
        // A program of its own (not the IDE) ends when its last non-daemon thread does: before,
        // OkHttp's dispatcher threads held it for a minute after stop().
        val before = Thread.getAllStackTraces().keys
        val harness = SidecarHarness()
        harness.dline.system.health()
        harness.close()
        val started = Thread.getAllStackTraces().keys.filter { it !in before && !it.isDaemon }
        started.forEach { it.join(5_000) }
        assertEquals(emptyList<String>(), started.filter { it.isAlive }.map { it.name })
    }

    @Test
    fun `a shutdown asked through the facade is not a crash, a new sidecar starts each time and none is given up on`() = runBlocking {
        val roots = TestRoots()
        // Two crashes in a minute are all this policy forgives: four shutdowns counted as crashes ended in Failed.
        val policy = RestartPolicy(maxRestarts = 2, window = 1.minutes, initialBackoff = 10.milliseconds, maxBackoff = 20.milliseconds)
        SidecarHarness(roots, roots.launch(), policy).use { harness ->
            repeat(4) { i ->
                val before = harness.connection()
                harness.dline.system.shutdown("asked $i")
                assertEquals(0, before.process.exited.get(10, TimeUnit.SECONDS))
                val next = withTimeout(30.seconds) {
                    harness.supervisor.state.first {
                        (it is SidecarState.Ready && it.connection.generation > before.generation) || it is SidecarState.Failed
                    }
                }
                assertTrue(next is SidecarState.Ready && next.connection.generation == before.generation + 1, "$next")
            }
            harness.dline.system.health()
            assertEquals(5, harness.connection().generation)
        }
    }

    @Test
    fun `gives up on a sidecar that keeps crashing, and says why`() = runBlocking {
        val roots = TestRoots()
        val policy = RestartPolicy(maxRestarts = 2, window = 1.minutes, initialBackoff = 10.milliseconds, maxBackoff = 20.milliseconds)
        SidecarHarness(roots, roots.launch(FakeSidecars.script(roots.base, "crashes-after-handshake")), policy).use { harness ->
            val failed = withTimeout(60.seconds) { harness.supervisor.state.first { it is SidecarState.Failed } } as SidecarState.Failed
            assertTrue(failed.reason.contains("exited with code 1"), failed.reason)
            assertTrue(failed.reason.contains("3 times"), failed.reason)
            val e = assertThrows<DlineException> { runBlocking { harness.dline.system.health() } }
            assertEquals(Code.UNAVAILABLE, e.code)
        }
    }

    @Test
    fun `a stream outlives connect-kotlin's default 10 s deadline`() = runBlocking {
        val roots = TestRoots()
        SidecarHarness(roots, roots.launch(FakeSidecars.script(roots.base, "slow-stream"))).use { harness ->
            val events = withTimeout(60.seconds) { harness.dline.tasks.subscribe("t1").toList() }
            assertEquals(listOf(1L, 2L), events.map { it.seq })
            assertEquals(1, harness.connection().generation)
        }
    }

    @Test
    fun `a task stream whose sidecar dies mid-stream resumes after the last seq, without duplicates`() = runBlocking {
        val roots = TestRoots()
        val launch = roots.launch(FakeSidecars.script(roots.base, "dies-mid-stream"), mapOf("FAKE_STATE" to roots.base.toString()))
        SidecarHarness(roots, launch).use { harness ->
            val events = withTimeout(60.seconds) { harness.dline.tasks.subscribe("t1").toList() }
            assertEquals((1L..6L).toList(), events.map { it.seq })
            assertTrue(events.all { it.taskId == "t1" && it.hasStatusChanged() })
            // The first process was asked from 0; the second from the last seq the client had when the first died.
            val afterSeqs = Files.readAllLines(roots.base.resolve("after_seq")).map(String::toLong)
            assertEquals(2, afterSeqs.size, "$afterSeqs")
            assertEquals(0L, afterSeqs[0])
            assertTrue(afterSeqs[1] in 1L..3L, "$afterSeqs")
            assertEquals(2, harness.connection().generation)
        }
    }
}
