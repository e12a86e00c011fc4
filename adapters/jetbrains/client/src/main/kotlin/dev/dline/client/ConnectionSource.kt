package dev.dline.client

import kotlin.time.Duration

/** Where the facade gets the live sidecar connection from; [SidecarSupervisor] is the real one. */
interface ConnectionSource {
    /** The current connection, waiting while a sidecar starts; throws [DlineException] (unavailable) if none will. */
    suspend fun connection(): SidecarConnection

    /**
     * Whether [connection]'s process is gone or goes within [grace]: tells a stream that ended
     * because its sidecar died (reconnect) from one the sidecar ended or failed (do not).
     */
    suspend fun diedWithin(connection: SidecarConnection, grace: Duration): Boolean

    /** [connection]'s sidecar was asked to exit (SystemApi.shutdown): its exit is not a crash. */
    fun exitRequested(connection: SidecarConnection) {}
}
