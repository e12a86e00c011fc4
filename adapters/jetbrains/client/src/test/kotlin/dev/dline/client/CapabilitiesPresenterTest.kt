package dev.dline.client

import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.attribute.PosixFilePermissions

/** [CapabilitiesPresenter] against the real sidecar: the list with toggles, flips, trust, MCP status. */
class CapabilitiesPresenterTest {
    private val harness = SidecarHarness()
    private val dline = harness.dline

    @AfterEach
    fun stop() = harness.close()

    private fun write(file: Path, text: String, executable: Boolean = false) {
        Files.createDirectories(file.parent)
        Files.writeString(file, text)
        if (executable) Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"))
    }

    @Test
    fun `lists capabilities with toggles, flips one at workspace scope, inherits again, and trusts the workspace`() = runBlocking {
        val workspace = Files.createDirectories(harness.roots.base.resolve("project"))
        write(workspace.resolve(".agents/rules/style.md"), "Use two spaces.\n")
        write(workspace.resolve(".agents/hooks/TaskStart.sh"), "#!/bin/sh\necho started\n", executable = true)
        write(harness.roots.docsDir.resolve("workflows/ship.md"), "# Ship\nTag it.\n")
        val presenter = CapabilitiesPresenter(dline.settings, workspace.toString())

        var view = presenter.refresh()
        assertEquals(listOf("rules", "workflows", "hooks"), view.rows.map { it.kind })
        val rule = view.rows.single { it.kind == "rules" }
        assertTrue(rule.toggledOn && rule.enabled)
        assertEquals(ToggleState.TOGGLE_STATE_INHERIT, rule.scopeState)
        assertEquals("", rule.decidedBy)
        val hook = view.rows.single { it.kind == "hooks" }
        assertTrue(hook.untrusted)
        assertTrue(hook.toggledOn, "its toggle is on; only trust keeps it from running")
        assertFalse(hook.enabled)
        assertTrue(hook.label.contains("(untrusted)"), hook.label)
        assertTrue(view.needsTrust)
        assertFalse(view.workspaceTrusted)

        val off = presenter.toggle(rule)
        assertFalse(off.toggledOn)
        assertFalse(off.enabled)
        assertEquals(ToggleState.TOGGLE_STATE_DISABLED, off.scopeState)
        assertEquals("workspace", off.decidedBy)
        assertEquals(off, presenter.view.value.rows.single { it.kind == "rules" }, "the view follows")
        // The sidecar stored it in the workspace scope: another workspace does not see it.
        val other = Files.createDirectories(harness.roots.base.resolve("other"))
        write(other.resolve(".agents/rules/style.md"), "Other.\n")
        assertTrue(CapabilitiesPresenter(dline.settings, other.toString()).refresh().rows.single { it.kind == "rules" }.enabled)

        val on = presenter.toggle(off)
        assertTrue(on.toggledOn)
        assertEquals(ToggleState.TOGGLE_STATE_ENABLED, on.scopeState)
        val inherited = presenter.inherit(on)
        assertEquals(ToggleState.TOGGLE_STATE_INHERIT, inherited.scopeState)
        assertEquals("", inherited.decidedBy)

        view = presenter.trust()
        assertTrue(view.workspaceTrusted)
        assertFalse(view.needsTrust)
        val trustedHook = view.rows.single { it.kind == "hooks" }
        assertFalse(trustedHook.untrusted)
        assertTrue(trustedHook.enabled)
    }

    @Test
    fun `an MCP server's status shows, and toggling it off at global scope stops it`() = runBlocking {
        val workspace = Files.createDirectories(harness.roots.base.resolve("project"))
        val server = Repo.root.resolve("test/capabilities/fixtures/mcp-test-server.mjs").toString()
        write(
            harness.roots.docsDir.resolve("settings/mcp_settings.json"),
            """{"mcpServers": {"calc": {"command": "node", "args": ["$server", "stdio"]}}}""",
        )
        val presenter = CapabilitiesPresenter(dline.settings, workspace.toString(), scope = ToggleScope.TOGGLE_SCOPE_GLOBAL)

        val calc = presenter.refresh(connectMcp = true).rows.single { it.kind == "mcp" }
        assertEquals("connected", calc.status, calc.error)
        assertEquals("global", calc.origin)

        val off = presenter.toggle(calc)
        assertFalse(off.toggledOn)
        assertEquals("global", off.decidedBy)
        assertEquals("stopped", off.status)
        assertEquals(
            "stopped",
            presenter.refresh(connectMcp = true).rows.single {
                it.kind == "mcp"
            }.status,
            "a disabled server is not started",
        )
        presenter.inherit(off)
        assertEquals(
            "connected",
            presenter.refresh(connectMcp = true).rows.single {
                it.kind == "mcp"
            }.status,
            "on again: started on demand",
        )
    }
}
