package dev.dline.client

import dline.v1.Import.DiscoverClineRequest
import dline.v1.Import.DiscoverClineResponse
import dline.v1.Import.ImportClineRequest
import dline.v1.Import.ImportClineResponse

/** ImportService: the explicit, read-only import of Cline's tasks and sessions. */
class ImportApi internal constructor(private val source: ConnectionSource) {
    /** What the sidecar finds in Cline's folders (nothing is written); also the folders it searched. */
    suspend fun discover(): DiscoverClineResponse =
        source.unary { imports.discoverCline(DiscoverClineRequest.getDefaultInstance(), emptyMap()) }

    /**
     * Imports the items of [sourceKeys] (their [ImportItem.getSourceKey]), or every importable
     * item with [all]. With [dryRun] it reports what would be imported ("would_import") and
     * writes nothing. Per-item failures are results with outcome "failed", not exceptions.
     */
    suspend fun import(sourceKeys: List<String> = emptyList(), all: Boolean = false, dryRun: Boolean = false): ImportClineResponse =
        source.unary {
            imports.importCline(
                ImportClineRequest.newBuilder().addAllSourceKeys(sourceKeys).setAll(all).setDryRun(dryRun).build(),
                emptyMap(),
            )
        }
}
