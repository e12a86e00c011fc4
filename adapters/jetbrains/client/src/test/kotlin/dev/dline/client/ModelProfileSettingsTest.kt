package dev.dline.client

import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.nio.file.Files

/** The settings page's profile form against the real sidecar. */
class ModelProfileSettingsTest {
    private val roots = TestRoots()
    private val harness = SidecarHarness(roots)
    private val settings = harness.dline.settings
    private var model: ModelServer? = null

    @AfterEach
    fun stop() {
        harness.close()
        model?.close()
    }

    @Test
    fun `saving the form makes its profile the default, so new tasks work beside another profile`() = runBlocking {
        model = ModelServer.start(roots.base, """{"turns": [{"toolCalls": [{"name": "attempt_completion", "input": {"result": "ok"}}]}]}""")
        // Two profiles exist already (made elsewhere) and none is the default: new tasks do not know which to use.
        for (name in listOf("Other", "Another")) {
            settings.upsertProfile(
                Profile.newBuilder().setName(name).setProvider("openai").setBaseUrl("http://127.0.0.1:9").setModel("x").build(),
            )
        }
        val workspace = Files.createDirectories(roots.base.resolve("workspace"))
        harness.dline.system.initialize("junit", "1", listOf(workspace.toString()))
        assertThrows<DlineException> { runBlocking { harness.dline.tasks.newTask(workspace.toString(), "Say ok") } }
        val page = ModelProfileSettings(settings)
        assertEquals(ModelProfileSettings.Form(), page.load(), "no default and not a single profile: a blank form")
        val saved = page.save(ModelProfileSettings.Form("Scripted", "anthropic", model!!.url, "claude-scripted"), apiKey = "test-key")
        assertEquals(ModelProfileSettings.Form("Scripted", "anthropic", model!!.url, "claude-scripted", apiKeySet = true), saved)
        val id = page.loadedId!!
        assertEquals(id, Structs.fromValue(settings.resolve(ModelProfileSettings.DEFAULT_PROFILE_KEY).value))

        val taskId = harness.dline.tasks.newTask(workspace.toString(), "Say ok")
        assertTrue(taskId.isNotEmpty())

        // The page opened again (a new instance) shows what was saved; saving again keeps the one profile.
        val again = ModelProfileSettings(settings)
        assertEquals(saved, again.load())
        again.save(saved.copy(model = "claude-other"))
        val scripted = settings.listProfiles().filter { it.name == "Scripted" }
        assertEquals(1, scripted.size)
        assertEquals("claude-other", scripted.single().model)
        assertTrue(ModelProfileSettings.API_KEY in scripted.single().secretsSetList, "an empty key field keeps the key")
        assertFalse(again.load().name.isEmpty())
    }
}
