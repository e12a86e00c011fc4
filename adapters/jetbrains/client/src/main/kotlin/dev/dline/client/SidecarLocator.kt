package dev.dline.client

import java.nio.file.Files
import java.nio.file.Path

/**
 * Finds the dline-core executable, in this order:
 * 1. [bundled]: the binary shipped inside the plugin's distribution (the plugin passes its path);
 * 2. the `DLINE_CORE` environment variable (a developer's own build);
 * 3. `dist/dline-core` in a Dline repository at or above [searchFrom] (running from sources).
 */
class SidecarLocator(
    private val bundled: Path? = null,
    private val environment: Map<String, String> = System.getenv(),
    private val searchFrom: Path? = null,
) {
    fun locate(): Path {
        val tried = mutableListOf<String>()
        bundled?.let { candidate ->
            if (isExecutable(candidate)) return candidate
            tried += "bundled path $candidate"
        }
        environment["DLINE_CORE"]?.takeIf { it.isNotBlank() }?.let { value ->
            val candidate = Path.of(value)
            if (isExecutable(candidate)) return candidate
            tried += "DLINE_CORE=$candidate"
        }
        var dir: Path? = searchFrom?.toAbsolutePath()?.normalize()
        while (dir != null) {
            val candidate = dir.resolve("dist").resolve(BINARY_NAME)
            if (isExecutable(candidate)) return candidate
            dir = dir.parent
        }
        if (searchFrom != null) tried += "dist/$BINARY_NAME at or above $searchFrom"
        throw SidecarStartException(
            "Cannot find the $BINARY_NAME executable (tried: ${tried.ifEmpty { listOf("nothing configured") }.joinToString("; ")}). " +
                "Set DLINE_CORE to its path.",
        )
    }

    private fun isExecutable(path: Path) = Files.isRegularFile(path) && Files.isExecutable(path)

    companion object {
        const val BINARY_NAME = "dline-core"
    }
}
