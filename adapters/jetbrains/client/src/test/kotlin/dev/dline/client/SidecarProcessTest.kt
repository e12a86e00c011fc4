package dev.dline.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.nio.file.Files
import java.nio.file.Path
import kotlin.time.Duration.Companion.seconds

class SidecarProcessTest {
    @Test
    fun `starts the real sidecar, reads its handshake and stops it by closing stdin`() {
        val roots = TestRoots()
        val sidecar = SidecarProcess.start(roots.launch())
        try {
            assertTrue(sidecar.handshake.url.matches(Regex("http://127\\.0\\.0\\.1:\\d+")), sidecar.handshake.url)
            assertEquals(sidecar.pid, sidecar.handshake.pid)
            assertTrue(sidecar.handshake.token.length >= 16)
            assertTrue(sidecar.isAlive)
        } finally {
            assertEquals(0, sidecar.stop())
        }
        assertFalse(sidecar.isAlive)
        // stderr went to the log file, and nothing of the token is in it.
        val log = Files.readString(roots.stderrLog)
        assertTrue(log.contains("serving"), log)
        assertFalse(log.contains(sidecar.handshake.token))
    }

    @Test
    fun `two sidecars get two ports, never a fixed one`() {
        val roots = TestRoots()
        val a = SidecarProcess.start(roots.launch())
        val b = SidecarProcess.start(roots.launch())
        try {
            assertTrue(a.handshake.url != b.handshake.url)
        } finally {
            a.stop()
            b.stop()
        }
    }

    @Test
    fun `gives up on a sidecar that never hands shake, and kills it`() {
        val roots = TestRoots()
        val launch = roots.launch(FakeSidecars.script(roots.base, "never-handshakes")).copy(handshakeTimeout = 3.seconds)
        val e = assertThrows<SidecarStartException> { SidecarProcess.start(launch) }
        assertTrue(e.message!!.contains("did not print its handshake"), e.message)
        assertNoChildRunning("never-handshakes")
    }

    @Test
    fun `reports a sidecar that exits before its handshake, pointing at its log`() {
        val roots = TestRoots()
        val e =
            assertThrows<SidecarStartException> {
                SidecarProcess.start(roots.launch(FakeSidecars.script(roots.base, "exits-before-handshake")))
            }
        assertTrue(e.message!!.contains("exited (code 3) before its handshake"), e.message)
        assertTrue(e.message!!.contains(roots.stderrLog.toString()), e.message)
        assertTrue(Files.readString(roots.stderrLog).contains("fake sidecar: cannot start"))
    }

    @Test
    fun `refuses a first line that is not a handshake`() {
        val roots = TestRoots()
        val e =
            assertThrows<SidecarStartException> { SidecarProcess.start(roots.launch(FakeSidecars.script(roots.base, "prints-garbage"))) }
        assertTrue(e.message!!.contains("not a handshake"), e.message)
        assertNoChildRunning("prints-garbage")
    }

    @Test
    fun `locates the plugin's build for this platform first, then DLINE_CORE, then the repository dist folder`() {
        val real = Repo.sidecarBinary()
        val roots = TestRoots()
        val bin = roots.base.resolve("plugin/bin")
        val linux = Files.createDirectories(bin.resolve("linux-x64")).resolve("dline-core")
        Files.copy(real, linux)
        assertEquals(linux, SidecarLocator(bundledBin = bin, environment = emptyMap(), platform = "linux-x64").locate())
        // Another platform's build is never offered: DLINE_CORE next, then the repository's build.
        assertEquals(
            real,
            SidecarLocator(bundledBin = bin, environment = mapOf("DLINE_CORE" to real.toString()), platform = "darwin-arm64").locate(),
        )
        assertEquals(
            Repo.root.resolve("dist/dline-core"),
            SidecarLocator(environment = emptyMap(), searchFrom = Repo.root.resolve("adapters/jetbrains/client")).locate(),
        )
        val e = assertThrows<SidecarStartException> {
            SidecarLocator(
                bundledBin = bin,
                environment = mapOf("DLINE_CORE" to "/nonexistent/other"),
                searchFrom = Path.of("/"),
                platform = "win32-x64",
            ).locate()
        }
        assertTrue(e.permanent)
        assertTrue(e.message!!.startsWith("This Dline plugin has no dline-core for win32-x64 (it ships: linux-x64)."), e.message)
        assertTrue(
            e.message!!.contains("win32-x64${java.io.File.separator}dline-core.exe") &&
                e.message!!.contains("DLINE_CORE=/nonexistent/other (no such file)"),
            e.message,
        )
    }

    @Test
    fun `names platforms as the sidecar builds do`() {
        assertEquals("linux-x64", SidecarPlatform.of("Linux", "amd64"))
        assertEquals("linux-arm64", SidecarPlatform.of("Linux", "aarch64"))
        assertEquals("darwin-arm64", SidecarPlatform.of("Mac OS X", "aarch64"))
        assertEquals("darwin-x64", SidecarPlatform.of("Mac OS X", "x86_64"))
        assertEquals("win32-x64", SidecarPlatform.of("Windows 11", "amd64"))
        assertEquals("dline-core.exe", SidecarPlatform.binaryName("win32-x64"))
    }

    private fun assertNoChildRunning(mode: String) {
        val deadline = System.nanoTime() + 5.seconds.inWholeNanoseconds
        fun left() = ProcessHandle.current().children()
            .filter { p -> p.isAlive && p.info().arguments().map { args -> mode in args }.orElse(false) }
            .count()
        while (left() > 0 && System.nanoTime() < deadline) Thread.sleep(50)
        assertEquals(0L, left(), "a fake sidecar ($mode) is still running")
    }
}
