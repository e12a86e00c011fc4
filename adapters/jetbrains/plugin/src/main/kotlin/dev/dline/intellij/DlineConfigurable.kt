package dev.dline.intellij

import com.intellij.openapi.application.EDT
import com.intellij.openapi.options.Configurable
import com.intellij.openapi.project.Project
import com.intellij.openapi.ui.ComboBox
import com.intellij.ui.components.JBLabel
import com.intellij.ui.components.JBPasswordField
import com.intellij.ui.components.JBTextField
import com.intellij.util.ui.FormBuilder
import dev.dline.client.ModelProfileSettings
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.launch
import kotlinx.coroutines.withContext
import javax.swing.JComponent

/**
 * Settings > Tools > Dline: the model profile new tasks use, as [ModelProfileSettings] loads and
 * saves it (tested in the client module): saving makes it the default profile. The core stores
 * it (profiles, 0600 secrets); the key is write-only: the page says whether one is set, never
 * shows it.
 */
class DlineConfigurable(private val project: Project) : Configurable {
    private val service get() = DlineProjectService.of(project)
    private val profile by lazy { ModelProfileSettings(service.dline.settings) }
    private val name = JBTextField()
    private val provider = ComboBox(arrayOf("anthropic", "openai"))
    private val baseUrl = JBTextField()
    private val model = JBTextField()
    private val apiKey = JBPasswordField()
    private val keyState = JBLabel()

    /** The form as last loaded or saved: what isModified compares with. */
    private var loaded = ModelProfileSettings.Form()

    override fun getDisplayName() = "Dline"

    override fun createComponent(): JComponent = FormBuilder.createFormBuilder()
        .addLabeledComponent("Profile name", name)
        .addLabeledComponent("Provider", provider)
        .addLabeledComponent("Base URL", baseUrl)
        .addLabeledComponent("Model", model)
        .addLabeledComponent("API key", apiKey)
        .addComponent(keyState)
        .panel

    private fun form() = ModelProfileSettings.Form(name.text, provider.item ?: "anthropic", baseUrl.text, model.text, loaded.apiKeySet)

    override fun isModified() = form() != loaded || apiKey.password.isNotEmpty()

    /** Shows the profile new tasks use (called when the page opens and by its Reset link). */
    override fun reset() {
        show(loaded)
        service.scope.launch {
            service.guarded {
                val current = profile.load()
                withContext(Dispatchers.EDT) { show(current) }
            }
        }
    }

    override fun apply() {
        val form = form()
        val key = String(apiKey.password)
        apiKey.text = ""
        service.scope.launch {
            service.guarded {
                val saved = profile.save(form, key)
                withContext(Dispatchers.EDT) { show(saved) }
                service.notify("Dline profile \"${saved.name}\" saved; new tasks use it.")
            }
        }
    }

    private fun show(form: ModelProfileSettings.Form) {
        loaded = form
        name.text = form.name
        provider.item = form.provider
        baseUrl.text = form.baseUrl
        model.text = form.model
        apiKey.text = ""
        keyState.text = if (form.apiKeySet) "An API key is set; leave the field empty to keep it." else "No API key is set."
    }
}
