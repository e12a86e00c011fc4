package dev.dline.client

import dline.v1.Settings.ClearSecretRequest
import dline.v1.Settings.DeleteProfileRequest
import dline.v1.Settings.GetCapabilityTogglesRequest
import dline.v1.Settings.GetSettingsRequest
import dline.v1.Settings.GetSettingsResponse
import dline.v1.Settings.ListCapabilitiesRequest
import dline.v1.Settings.ListCapabilitiesResponse
import dline.v1.Settings.ListProfilesRequest
import dline.v1.Settings.ResolveSettingRequest
import dline.v1.Settings.ResolveSettingResponse
import dline.v1.Settings.SetCapabilityToggleRequest
import dline.v1.Settings.SetSecretRequest
import dline.v1.Settings.SetSessionOverrideRequest
import dline.v1.Settings.TrustWorkspaceRequest
import dline.v1.Settings.UpdateSettingsRequest
import dline.v1.Settings.UpdateSettingsResponse
import dline.v1.Settings.UpsertProfileRequest

/** SettingsService: settings by scope, profiles, write-only secrets, capabilities and their toggles. */
class SettingsApi internal constructor(private val source: ConnectionSource) {
    suspend fun get(scope: SettingsScope, workspaceRoot: String = "", taskId: String = ""): GetSettingsResponse = source.unary {
        settings.getSettings(
            GetSettingsRequest.newBuilder().setScope(scope).setWorkspaceRoot(workspaceRoot).setTaskId(taskId).build(),
            emptyMap(),
        )
    }

    /**
     * Sets the keys of [patch] (a null value removes the key). With [expectedRevision], the
     * sidecar refuses with `aborted` unless the file is still at that revision.
     */
    suspend fun update(
        scope: SettingsScope,
        patch: Map<String, Any?>,
        workspaceRoot: String = "",
        taskId: String = "",
        expectedRevision: Long? = null,
    ): UpdateSettingsResponse = source.unary {
        val request = UpdateSettingsRequest.newBuilder()
            .setScope(scope).setWorkspaceRoot(workspaceRoot).setTaskId(taskId).setPatch(Structs.toStruct(patch))
        expectedRevision?.let { request.setExpectedRevision(it) }
        settings.updateSettings(request.build(), emptyMap())
    }

    suspend fun resolve(key: String, workspaceRoot: String = "", taskId: String = ""): ResolveSettingResponse = source.unary {
        settings.resolveSetting(
            ResolveSettingRequest.newBuilder().setKey(key).setWorkspaceRoot(workspaceRoot).setTaskId(taskId).build(),
            emptyMap(),
        )
    }

    /** A value for this sidecar's session only; [value] null clears the override. */
    suspend fun setSessionOverride(key: String, value: Any?) {
        source.unary {
            val request = SetSessionOverrideRequest.newBuilder().setKey(key)
            if (value == null) request.setClear(true) else request.setValue(Structs.toValue(value))
            settings.setSessionOverride(request.build(), emptyMap())
        }
    }

    suspend fun listProfiles(): List<Profile> =
        source.unary { settings.listProfiles(ListProfilesRequest.getDefaultInstance(), emptyMap()) }.profilesList

    /** Creates (empty id) or replaces a profile; returns it as stored, with its id. */
    suspend fun upsertProfile(profile: Profile): Profile =
        source.unary { settings.upsertProfile(UpsertProfileRequest.newBuilder().setProfile(profile).build(), emptyMap()) }.profile

    suspend fun deleteProfile(id: String) {
        source.unary { settings.deleteProfile(DeleteProfileRequest.newBuilder().setId(id).build(), emptyMap()) }
    }

    /** Secrets are write-only: [Profile.getSecretsSetList] tells which are set, never their values. */
    suspend fun setSecret(profileId: String, name: String, value: String) {
        source.unary {
            settings.setSecret(SetSecretRequest.newBuilder().setProfileId(profileId).setName(name).setValue(value).build(), emptyMap())
        }
    }

    suspend fun clearSecret(profileId: String, name: String) {
        source.unary { settings.clearSecret(ClearSecretRequest.newBuilder().setProfileId(profileId).setName(name).build(), emptyMap()) }
    }

    suspend fun capabilityToggles(kind: String = "", workspaceRoot: String = "", taskId: String = "") = source.unary {
        settings.getCapabilityToggles(
            GetCapabilityTogglesRequest.newBuilder().setKind(kind).setWorkspaceRoot(workspaceRoot).setTaskId(taskId).build(),
            emptyMap(),
        )
    }.togglesList

    suspend fun setCapabilityToggle(request: SetCapabilityToggleRequest) =
        source.unary { settings.setCapabilityToggle(request, emptyMap()) }.toggle

    /**
     * Sets the toggle of one capability ([Capability.getKind], [Capability.getResource]) in
     * [scope]; [ToggleState.TOGGLE_STATE_INHERIT] removes the scope's entry. Returns the toggle
     * as resolved afterwards.
     */
    suspend fun setCapabilityToggle(
        scope: ToggleScope,
        kind: String,
        resource: String,
        state: ToggleState,
        workspaceRoot: String = "",
        taskId: String = "",
    ): CapabilityToggle = setCapabilityToggle(
        SetCapabilityToggleRequest.newBuilder()
            .setScope(scope).setKind(kind).setResource(resource).setState(state)
            .setWorkspaceRoot(workspaceRoot).setTaskId(taskId).build(),
    )

    /**
     * Every rule, workflow, skill, subagent definition, hook and MCP server seen from
     * [workspaceRoot] (and [taskId]'s toggles): origin, effective state, per-scope toggles,
     * errors, MCP status; malformed files are in [ListCapabilitiesResponse.getProblemsList].
     * [kind] narrows to one kind; [connectMcp] starts the enabled MCP servers first.
     */
    suspend fun listCapabilities(
        workspaceRoot: String = "",
        taskId: String = "",
        kind: String = "",
        connectMcp: Boolean = false,
    ): ListCapabilitiesResponse = source.unary {
        settings.listCapabilities(
            ListCapabilitiesRequest.newBuilder()
                .setWorkspaceRoot(workspaceRoot).setTaskId(taskId).setKind(kind).setConnectMcp(connectMcp).build(),
            emptyMap(),
        )
    }

    /**
     * Trusts (or stops trusting) [workspaceRoot]: its `.agents/hooks` and `.agents/mcp` servers
     * come from the repository and run only once trusted. Returns whether it is trusted now.
     */
    suspend fun trustWorkspace(workspaceRoot: String, trusted: Boolean): Boolean = source.unary {
        settings.trustWorkspace(TrustWorkspaceRequest.newBuilder().setWorkspaceRoot(workspaceRoot).setTrusted(trusted).build(), emptyMap())
    }.workspaceTrusted
}
