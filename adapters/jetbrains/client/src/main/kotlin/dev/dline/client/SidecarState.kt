package dev.dline.client

import kotlin.time.Duration

/** What a [SidecarSupervisor] is doing; the plugin shows it in the tool window's status line. */
sealed interface SidecarState {
    data object NotStarted : SidecarState

    data class Starting(val generation: Int) : SidecarState

    data class Ready(val connection: SidecarConnection) : SidecarState

    /** The sidecar died ([why]); a new one starts after [delay]. */
    data class Restarting(val attempt: Int, val delay: Duration, val why: String) : SidecarState

    /** Gave up (crash loop, or it cannot start): [reason] says why. A manual restart is possible. */
    data class Failed(val reason: String) : SidecarState

    /** Stopped on purpose (the project closed). */
    data object Stopped : SidecarState
}
