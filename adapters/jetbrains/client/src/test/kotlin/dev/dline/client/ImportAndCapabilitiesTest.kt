package dev.dline.client

import com.connectrpc.Code
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.nio.file.Files
import java.nio.file.Path

/** ImportApi and SettingsApi.listCapabilities against the real sidecar, with Cline data in the isolated HOME. */
class ImportAndCapabilitiesTest {
    private val harness = SidecarHarness()
    private val dline = harness.dline

    @AfterEach
    fun stop() = harness.close()

    /** A legacy Cline task folder, in the formats of test/import/fixtures.ts. */
    private fun writeLegacyTask(taskId: String, task: String): Path {
        val dir = Files.createDirectories(harness.roots.home.resolve(".cline/data/tasks/$taskId"))
        val t0 = 1_717_000_000_000L
        val usage = """{\"request\":\"…\",\"tokensIn\":100,\"tokensOut\":20,\"cacheWrites\":5,\"cacheReads\":7,\"cost\":0.01}"""
        Files.writeString(
            dir.resolve("ui_messages.json"),
            """[
              {"ts":$t0,"type":"say","say":"task","text":"$task"},
              {"ts":${t0 + 1},"type":"say","say":"api_req_started","text":"$usage"},
              {"ts":${t0 + 2},"type":"say","say":"text","text":"Working on it."},
              {"ts":${t0 + 3},"type":"say","say":"completion_result","text":"The test passes now."}
            ]""",
        )
        Files.writeString(
            dir.resolve("api_conversation_history.json"),
            """[
              {"role":"user","content":[{"type":"text","text":"<task>\n$task\n</task>"}]},
              {"role":"assistant","content":[{"type":"text","text":"The test passes now."}],"modelInfo":{"modelId":"claude-sonnet-4-5","providerId":"anthropic","mode":"act"}}
            ]""",
        )
        return dir
    }

    /** Every file under [dir], relative path -> content: what Cline owns must stay byte for byte. */
    private fun snapshot(dir: Path): Map<String, String> = Files.walk(dir).use { paths ->
        paths.filter(Files::isRegularFile).toList().associate { dir.relativize(it).toString() to Files.readString(it) }
    }

    @Test
    fun `a legacy Cline task is discovered, dry-run imported without writing, then imported and listed`() = runBlocking {
        val clineDir = writeLegacyTask("1717000000000", "Make the tests pass").parent.parent
        val before = snapshot(clineDir)

        val discovered = dline.imports.discover()
        val item = discovered.itemsList.single { it.sourceKey == "legacy:1717000000000" }
        assertEquals(ImportItemKind.IMPORT_ITEM_KIND_LEGACY_TASK, item.kind)
        assertEquals("Make the tests pass", item.title)
        assertEquals("", item.skippedReason)
        assertEquals("", item.importedTaskId)
        assertEquals(100L, item.tokensIn)
        assertTrue(discovered.rootsSearchedList.any { it.contains(".cline") }, discovered.rootsSearchedList.toString())

        val dry = dline.imports.import(sourceKeys = listOf(item.sourceKey), dryRun = true)
        assertTrue(dry.dryRun)
        assertEquals("would_import", dry.resultsList.single().outcome)
        assertTrue(dline.history.list().tasksList.isEmpty(), "a dry run writes no task")
        assertEquals("", dline.imports.discover().itemsList.single { it.sourceKey == item.sourceKey }.importedTaskId)

        val done = dline.imports.import(sourceKeys = listOf(item.sourceKey))
        val result = done.resultsList.single()
        assertEquals("imported", result.outcome, result.error)
        assertTrue(result.taskId.isNotEmpty())
        val listed = dline.history.list().tasksList.single { it.id == result.taskId }
        assertEquals("Make the tests pass", listed.title)
        assertEquals("cline-import:legacy:1717000000000", listed.source)
        assertEquals(result.taskId, dline.imports.discover().itemsList.single { it.sourceKey == item.sourceKey }.importedTaskId)
        assertEquals("already_imported", dline.imports.import(all = true).resultsList.single { it.sourceKey == item.sourceKey }.outcome)
        assertEquals(before, snapshot(clineDir), "the import is read-only")
    }

    @Test
    fun `an unknown source key fails as a result, a request naming nothing is invalid_argument`() = runBlocking {
        val result = dline.imports.import(sourceKeys = listOf("legacy:no-such-task")).resultsList.single()
        assertEquals("legacy:no-such-task", result.sourceKey)
        assertEquals("failed", result.outcome)
        assertTrue(result.error.isNotBlank())
        val empty = assertThrows<DlineException> { runBlocking { dline.imports.import() } }
        assertEquals(Code.INVALID_ARGUMENT, empty.code)
    }

    @Test
    fun `a workspace rule is listed and toggled off at workspace scope`() = runBlocking {
        val workspace = Files.createDirectories(harness.roots.base.resolve("project"))
        Files.createDirectories(workspace.resolve(".agents/rules"))
        Files.writeString(workspace.resolve(".agents/rules/style.md"), "# Style\nUse two spaces.\n")
        val root = workspace.toString()

        val rule = dline.settings.listCapabilities(workspaceRoot = root).capabilitiesList.single {
            it.kind == "rules" &&
                it.sourcePath.endsWith("style.md")
        }
        assertEquals("workspace", rule.origin)
        assertTrue(rule.enabled)
        assertEquals(ToggleState.TOGGLE_STATE_INHERIT, rule.toggle.workspace)

        val toggle = dline.settings.setCapabilityToggle(
            ToggleScope.TOGGLE_SCOPE_WORKSPACE,
            rule.kind,
            rule.resource,
            ToggleState.TOGGLE_STATE_DISABLED,
            workspaceRoot = root,
        )
        assertFalse(toggle.enabled)
        assertEquals(ToggleScope.TOGGLE_SCOPE_WORKSPACE, toggle.decidedBy)

        val after = dline.settings.listCapabilities(workspaceRoot = root, kind = "rules").capabilitiesList.single {
            it.resource ==
                rule.resource
        }
        assertFalse(after.enabled)
        assertEquals(ToggleState.TOGGLE_STATE_DISABLED, after.toggle.workspace)
        assertEquals(ToggleState.TOGGLE_STATE_INHERIT, after.toggle.global)

        // Inherit removes the workspace entry: enabled again.
        dline.settings.setCapabilityToggle(
            ToggleScope.TOGGLE_SCOPE_WORKSPACE,
            rule.kind,
            rule.resource,
            ToggleState.TOGGLE_STATE_INHERIT,
            workspaceRoot = root,
        )
        assertTrue(
            dline.settings.listCapabilities(workspaceRoot = root).capabilitiesList.single {
                it.resource == rule.resource &&
                    it.kind == "rules"
            }.enabled,
        )
    }
}
