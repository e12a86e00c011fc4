package dev.dline.client

import dline.v1.Settings.ProfileSource

/**
 * The settings page's model profile (Settings > Tools > Dline): [load] fills the form with the
 * profile new tasks use (the `defaultProfileId` setting, else the only stored profile), and [save]
 * stores the form as that profile (a new one when there was none), sets its API key when one was
 * typed, and makes it the default, so that new tasks use it however many profiles exist. The key
 * is write-only: the form only says whether one is set. The plugin's page renders [Form].
 */
class ModelProfileSettings(private val settings: SettingsApi) {
    data class Form(
        val name: String = "Default",
        val provider: String = "anthropic",
        val baseUrl: String = "",
        val model: String = "",
        /** The profile has an API key (its value is never shown). */
        val apiKeySet: Boolean = false,
    )

    /** The stored profile [load] found (its id is kept when saving), or null. */
    @Volatile
    var loadedId: String? = null
        private set

    suspend fun load(): Form {
        val profiles = settings.listProfiles()
        val defaultId = Structs.fromValue(settings.resolve(DEFAULT_PROFILE_KEY).value) as? String ?: ""
        val stored = profiles.filter { it.source != ProfileSource.PROFILE_SOURCE_ENVIRONMENT }
        val profile = profiles.firstOrNull { it.id == defaultId && defaultId.isNotEmpty() } ?: stored.singleOrNull()
        loadedId = profile?.takeIf { it.source != ProfileSource.PROFILE_SOURCE_ENVIRONMENT }?.id
        return profile?.let {
            Form(it.name, it.provider.ifEmpty { "anthropic" }, it.baseUrl, it.model, API_KEY in it.secretsSetList)
        } ?: Form()
    }

    /** Saves [form] (and [apiKey] unless it is empty) and makes the profile the default for new tasks. */
    suspend fun save(form: Form, apiKey: String = ""): Form {
        val base = loadedId?.let { id -> settings.listProfiles().firstOrNull { it.id == id } }
        val profile = (base?.toBuilder() ?: Profile.newBuilder())
            .setName(form.name.trim().ifEmpty { "Default" })
            .setProvider(form.provider)
            .setBaseUrl(form.baseUrl.trim())
            .setModel(form.model.trim())
            .clearSecretsSet()
            .clearSource()
            .clearPriceSource()
            .build()
        val saved = settings.upsertProfile(profile)
        if (apiKey.isNotEmpty()) settings.setSecret(saved.id, API_KEY, apiKey)
        settings.update(SettingsScope.SETTINGS_SCOPE_GLOBAL, mapOf(DEFAULT_PROFILE_KEY to saved.id))
        loadedId = saved.id
        return load()
    }

    companion object {
        const val DEFAULT_PROFILE_KEY = "defaultProfileId"
        const val API_KEY = "api_key"
    }
}
