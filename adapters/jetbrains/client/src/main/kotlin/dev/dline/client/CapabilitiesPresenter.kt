package dev.dline.client

import dline.v1.Settings.McpServerState
import kotlinx.coroutines.flow.MutableStateFlow
import kotlinx.coroutines.flow.StateFlow
import kotlinx.coroutines.flow.asStateFlow

/**
 * The capabilities view of one workspace (rules, workflows, skills, subagents, hooks, MCP
 * servers): a list with a toggle each, the workspace's trust, and the malformed files. The
 * plugin's tool window only renders [view] and calls these methods; the logic is here, tested
 * against the real sidecar.
 *
 * A toggle is flipped in [scope] (the workspace by default): the row is switched to the opposite
 * of its effective state, so a capability enabled by inheritance gets an explicit "disabled"
 * entry, and [inherit] removes the scope's entry again.
 */
class CapabilitiesPresenter(
    private val settings: SettingsApi,
    val workspaceRoot: String,
    val scope: ToggleScope = ToggleScope.TOGGLE_SCOPE_WORKSPACE,
    private val taskId: String = "",
) {
    data class Row(
        val kind: String,
        val resource: String,
        val name: String,
        val description: String,
        /** "global", "workspace" or "session". */
        val origin: String,
        val sourcePath: String,
        /** Effective: the toggles enable it, it is usable and (hooks, MCP) trusted. */
        val enabled: Boolean,
        /** The checkbox: what the toggles decide, whatever else keeps it from running. */
        val toggledOn: Boolean,
        /** This presenter's scope's own entry: enabled, disabled or inherit. */
        val scopeState: ToggleState,
        /** Which scope decided [toggledOn] ("global", "workspace", "task"), "" when none did. */
        val decidedBy: String,
        val untrusted: Boolean,
        /** A status label: an MCP server's state ("connected", "untrusted", ...), "" otherwise. */
        val status: String,
        val error: String,
    ) {
        /** One line for a list cell. */
        val label: String
            get() = buildString {
                append(if (toggledOn) "[x] " else "[ ] ")
                append(kind).append(": ").append(name)
                if (status.isNotEmpty()) {
                    append(" (").append(status).append(")")
                } else if (untrusted) {
                    append(" (untrusted)")
                }
                if (origin != "global") append(" — ").append(origin)
                if (error.isNotEmpty()) append(" ⚠ ").append(error)
            }
    }

    data class View(
        val rows: List<Row> = emptyList(),
        val workspaceTrusted: Boolean = false,
        /** Malformed files kept as they are: "path: message". */
        val problems: List<String> = emptyList(),
        /** Workspace hooks or MCP servers waiting for [trust]. */
        val needsTrust: Boolean = false,
    )

    private val state = MutableStateFlow(View())
    val view: StateFlow<View> = state.asStateFlow()

    /** Reloads the list; [connectMcp] starts the enabled MCP servers so that their status and tools show. */
    suspend fun refresh(connectMcp: Boolean = false): View {
        val res = settings.listCapabilities(workspaceRoot = workspaceRoot, taskId = taskId, connectMcp = connectMcp)
        val rows = res.capabilitiesList.map(::rowOf).sortedWith(compareBy({ KIND_ORDER.indexOf(it.kind) }, { it.name }))
        val next = View(
            rows = rows,
            workspaceTrusted = res.workspaceTrusted,
            problems = res.problemsList.map { "${it.path}: ${it.message}" },
            needsTrust = rows.any { it.untrusted },
        )
        state.value = next
        return next
    }

    /** Flips the row's toggle in [scope] and reloads; returns the row as listed afterwards. */
    suspend fun toggle(row: Row): Row = set(row, if (row.toggledOn) ToggleState.TOGGLE_STATE_DISABLED else ToggleState.TOGGLE_STATE_ENABLED)

    /** Removes [scope]'s entry: a weaker scope (or the default, on) decides again. */
    suspend fun inherit(row: Row): Row = set(row, ToggleState.TOGGLE_STATE_INHERIT)

    private suspend fun set(row: Row, to: ToggleState): Row {
        settings.setCapabilityToggle(scope, row.kind, row.resource, to, workspaceRoot = workspaceRoot, taskId = taskId)
        return refresh().rows.first { it.kind == row.kind && it.resource == row.resource }
    }

    /** Trusts the workspace (its hooks and MCP servers may run) or stops trusting it. */
    suspend fun trust(trusted: Boolean = true): View {
        settings.trustWorkspace(workspaceRoot, trusted)
        return refresh()
    }

    private fun rowOf(c: Capability): Row {
        val t = c.toggle
        val scopeState = when (scope) {
            ToggleScope.TOGGLE_SCOPE_GLOBAL -> t.global
            ToggleScope.TOGGLE_SCOPE_TASK -> t.task
            else -> t.workspace
        }
        return Row(
            kind = c.kind,
            resource = c.resource,
            name = c.name,
            description = c.description,
            origin = c.origin,
            sourcePath = c.sourcePath,
            enabled = c.enabled,
            toggledOn = t.enabled || c.origin == "session",
            scopeState = scopeState,
            decidedBy = if (t.decidedBy ==
                ToggleScope.TOGGLE_SCOPE_UNSPECIFIED
            ) {
                ""
            } else {
                t.decidedBy.name.removePrefix("TOGGLE_SCOPE_").lowercase()
            },
            untrusted = c.untrusted,
            status = if (c.hasMcp() &&
                c.mcp.state != McpServerState.MCP_SERVER_STATE_UNSPECIFIED
            ) {
                c.mcp.state.name.removePrefix("MCP_SERVER_STATE_").lowercase()
            } else {
                ""
            },
            error = c.error,
        )
    }

    companion object {
        val KIND_ORDER = listOf("rules", "workflows", "skills", "subagents", "hooks", "mcp")
    }
}
