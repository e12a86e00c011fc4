package dev.dline.client

import java.nio.file.Files
import java.nio.file.Path

/**
 * Finds the dline-core executable, in this order:
 * 1. [bundledBin]: the plugin distribution's `bin` folder, which holds one build per platform
 *    (`bin/<os>-<arch>/dline-core`); the one for [platform] is used, never another's;
 * 2. the `DLINE_CORE` environment variable (a developer's own build);
 * 3. `dist/dline-core` in a Dline repository at or above [searchFrom] (running from sources).
 * When none is there it throws a [SidecarStartException] (permanent) that says what was tried,
 * and, when the plugin has no build for this platform, which platforms it has.
 */
class SidecarLocator @JvmOverloads constructor(
    private val bundledBin: Path? = null,
    private val environment: Map<String, String> = System.getenv(),
    private val searchFrom: Path? = null,
    private val platform: String = SidecarPlatform.current(),
) {
    @Throws(SidecarStartException::class)
    fun locate(): Path {
        val tried = mutableListOf<String>()
        var noBuildForPlatform: String? = null
        bundledBin?.let { bin ->
            val candidate = bin.resolve(platform).resolve(SidecarPlatform.binaryName(platform))
            if (isExecutable(candidate)) return candidate
            tried += "the plugin's $candidate"
            if (!Files.exists(candidate)) {
                val shipped = shippedPlatforms(bin)
                noBuildForPlatform = "This Dline plugin has no dline-core for $platform " +
                    "(it ships: ${shipped.ifEmpty { listOf("none") }.joinToString(", ")})."
            }
        }
        environment["DLINE_CORE"]?.takeIf { it.isNotBlank() }?.let { value ->
            val candidate = Path.of(value)
            if (isExecutable(candidate)) return candidate
            tried += "DLINE_CORE=$candidate" + if (Files.exists(candidate)) " (not executable)" else " (no such file)"
        }
        var dir: Path? = searchFrom?.toAbsolutePath()?.normalize()
        while (dir != null) {
            val candidate = dir.resolve("dist").resolve(BINARY_NAME)
            if (isExecutable(candidate)) return candidate
            dir = dir.parent
        }
        if (searchFrom != null) tried += "dist/$BINARY_NAME at or above $searchFrom"
        val lead = noBuildForPlatform?.let { "$it " } ?: ""
        throw SidecarStartException(
            "${lead}Cannot find the $BINARY_NAME executable (tried: ${tried.ifEmpty {
                listOf("nothing configured")
            }.joinToString("; ")}). " +
                "Set DLINE_CORE to the path of a $BINARY_NAME built for this machine.",
            permanent = true,
        )
    }

    private fun shippedPlatforms(bin: Path): List<String> = if (!Files.isDirectory(bin)) {
        emptyList()
    } else {
        Files.list(bin).use { entries ->
            entries.filter(Files::isDirectory).map { it.fileName.toString() }.sorted().toList()
        }
    }

    private fun isExecutable(path: Path) = Files.isRegularFile(path) && Files.isExecutable(path)

    companion object {
        const val BINARY_NAME = "dline-core"
    }
}
