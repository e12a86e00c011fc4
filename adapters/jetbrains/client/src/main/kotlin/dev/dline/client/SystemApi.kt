package dev.dline.client

import dline.v1.System.HealthRequest
import dline.v1.System.HealthResponse
import dline.v1.System.InitializeRequest
import dline.v1.System.InitializeResponse
import dline.v1.System.ShutdownRequest

/** SystemService: call [initialize] first in every window. */
class SystemApi internal constructor(private val source: ConnectionSource) {
    suspend fun initialize(clientName: String, clientVersion: String, workspaceRoots: List<String>): InitializeResponse = source.unary {
        system.initialize(
            InitializeRequest.newBuilder()
                .setClientName(clientName).setClientVersion(clientVersion).addAllWorkspaceRoots(workspaceRoots).build(),
            emptyMap(),
        )
    }

    suspend fun health(): HealthResponse = source.unary { system.health(HealthRequest.getDefaultInstance(), emptyMap()) }

    /** Asks the sidecar to flush and exit; its supervisor then starts a new one unless it is stopping. */
    suspend fun shutdown(reason: String) {
        source.unary {
            // Before the call: the sidecar may exit before its answer is read.
            source.exitRequested(this)
            system.shutdown(ShutdownRequest.newBuilder().setReason(reason).build(), emptyMap())
        }
    }
}
