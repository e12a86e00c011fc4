package dev.dline.client

import com.connectrpc.Code
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.takeWhile
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.nio.file.Files
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.seconds

/** Starts that can never succeed are reported at once; a supervisor that was never used starts nothing. */
class StartFailureTest {
    /** The states [supervisor] goes through from its first call until it settles in Failed. */
    private fun statesUntilFailed(supervisor: SidecarSupervisor): List<SidecarState> = runBlocking {
        val states = async(start = CoroutineStart.UNDISPATCHED) {
            supervisor.state.takeWhile { it !is SidecarState.Failed }.toList()
        }
        val e = assertThrows<DlineException> { runBlocking { supervisor.connection() } }
        assertEquals(Code.UNAVAILABLE, e.code)
        withTimeout(30.seconds) { states.await() } + supervisor.state.value
    }

    @Test
    fun `a missing binary fails at once with the reason, without retries`() {
        val roots = TestRoots()
        val missing = roots.base.resolve("no-such-dline-core")
        SidecarSupervisor(roots.launch(missing)).use { supervisor ->
            val states = statesUntilFailed(supervisor)
            assertFalse(states.any { it is SidecarState.Restarting }, "$states")
            val reason = (states.last() as SidecarState.Failed).reason
            assertTrue(reason.contains(missing.toString()) && reason.contains("does not exist"), reason)
            assertFalse(reason.contains("times within"), reason)
        }
    }

    @Test
    fun `a binary that is not executable fails at once, saying so`() {
        val roots = TestRoots()
        val notExecutable = Files.writeString(roots.base.resolve("dline-core"), "#!/bin/sh\n")
        SidecarSupervisor(roots.launch(notExecutable)).use { supervisor ->
            val states = statesUntilFailed(supervisor)
            assertFalse(states.any { it is SidecarState.Restarting }, "$states")
            val reason = (states.last() as SidecarState.Failed).reason
            assertTrue(reason.contains("not executable"), reason)
        }
    }

    @Test
    fun `finding the binary is part of starting, so none for this platform is a Failed state, not an exception where the client is made`() {
        val roots = TestRoots()
        val bin = Files.createDirectories(roots.base.resolve("plugin/bin/linux-x64"))
        Files.copy(Repo.sidecarBinary(), bin.resolve("dline-core"))
        val locator = SidecarLocator(bundledBin = bin.parent, environment = emptyMap(), platform = "darwin-arm64")
        SidecarSupervisor({ roots.launch(locator.locate()) }).use { supervisor ->
            // What the plugin's tool window does on the UI thread: nothing here may throw.
            val dline = DlineClient(supervisor)
            val presenter = CapabilitiesPresenter(dline.settings, roots.base.toString())
            val e = assertThrows<DlineException> { runBlocking { presenter.refresh() } }
            assertEquals(Code.UNAVAILABLE, e.code)
            assertTrue(e.message.contains("no dline-core for darwin-arm64 (it ships: linux-x64)"), e.message)
            assertTrue(supervisor.state.value is SidecarState.Failed)
        }
    }

    @Test
    fun `stopping a supervisor that was never used starts no sidecar`() {
        val roots = TestRoots()
        val launches = AtomicInteger()
        val supervisor = SidecarSupervisor({
            launches.incrementAndGet()
            roots.launch()
        })
        supervisor.stop()
        assertEquals(0, launches.get())
        assertEquals(SidecarState.Stopped, supervisor.state.value)
    }

    @Test
    fun `restart replaces a ready sidecar, closing its stdin, without counting a crash`() = runBlocking {
        SidecarHarness().use { harness ->
            val first = harness.connection()
            val states = async(start = CoroutineStart.UNDISPATCHED) {
                harness.supervisor.state.takeWhile { !(it is SidecarState.Ready && it.connection.generation == 2) }.toList()
            }
            harness.supervisor.restart()
            withTimeout(60.seconds) { states.await() }.let { seen ->
                assertFalse(seen.any { it is SidecarState.Restarting || it is SidecarState.Failed }, "$seen")
            }
            assertEquals(0, first.process.exited.get(), "the old sidecar exited on its own after its stdin closed")
            val second = harness.connection()
            assertEquals(2, second.generation)
            assertEquals(second.process.pid, harness.dline.system.health().pid.toLong())
        }
    }
}
