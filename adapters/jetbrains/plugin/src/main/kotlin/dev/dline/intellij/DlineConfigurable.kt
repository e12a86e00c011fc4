package dev.dline.intellij

import com.intellij.openapi.options.Configurable
import com.intellij.openapi.project.Project
import com.intellij.openapi.ui.ComboBox
import com.intellij.ui.components.JBPasswordField
import com.intellij.ui.components.JBTextField
import com.intellij.util.ui.FormBuilder
import dev.dline.client.Profile
import kotlinx.coroutines.launch
import javax.swing.JComponent

/**
 * Settings > Tools > Dline: the model profile used by new tasks. Stored by the core (profiles,
 * 0600 secrets); the key is write-only: the page shows whether one is set, never its value.
 */
class DlineConfigurable(private val project: Project) : Configurable {
    private val name = JBTextField("Default")
    private val provider = ComboBox(arrayOf("anthropic", "openai"))
    private val baseUrl = JBTextField()
    private val model = JBTextField()
    private val apiKey = JBPasswordField()
    private var modified = false

    override fun getDisplayName() = "Dline"

    override fun createComponent(): JComponent {
        listOf(name, baseUrl, model, apiKey).forEach { field ->
            field.document.addDocumentListener(object : com.intellij.ui.DocumentAdapter() {
                override fun textChanged(e: javax.swing.event.DocumentEvent) {
                    modified = true
                }
            })
        }
        provider.addActionListener { modified = true }
        return FormBuilder.createFormBuilder()
            .addLabeledComponent("Profile name", name)
            .addLabeledComponent("Provider", provider)
            .addLabeledComponent("Base URL", baseUrl)
            .addLabeledComponent("Model", model)
            .addLabeledComponent("API key (leave empty to keep)", apiKey)
            .panel
    }

    override fun isModified() = modified

    override fun apply() {
        val service = DlineProjectService.of(project)
        val profile = Profile.newBuilder().setName(name.text).setProvider(provider.item).setBaseUrl(baseUrl.text).setModel(model.text).build()
        val key = String(apiKey.password)
        service.scope.launch {
            service.guarded {
                val existing = service.dline.settings.listProfiles().firstOrNull { it.name == profile.name }
                val saved = service.dline.settings.upsertProfile(profile.toBuilder().setId(existing?.id ?: "").build())
                if (key.isNotEmpty()) service.dline.settings.setSecret(saved.id, "api_key", key)
                service.notify("Dline profile \"${saved.name}\" saved.")
            }
        }
        apiKey.text = ""
        modified = false
    }
}
