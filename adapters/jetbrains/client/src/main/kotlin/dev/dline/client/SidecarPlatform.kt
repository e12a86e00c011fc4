package dev.dline.client

/**
 * The platform names the sidecar's builds use (`<os>-<arch>`, as Node names them: `linux-x64`,
 * `darwin-arm64`, `win32-x64`): the plugin ships each build as `bin/<platform>/dline-core`.
 */
object SidecarPlatform {
    /** The platform of the JVM this runs in. */
    fun current(): String = of(System.getProperty("os.name"), System.getProperty("os.arch"))

    fun of(osName: String, osArch: String): String {
        val os = osName.lowercase()
        val osPart = when {
            os.startsWith("linux") -> "linux"
            os.startsWith("mac") || os.startsWith("darwin") -> "darwin"
            os.startsWith("windows") -> "win32"
            else -> os.replace(' ', '_')
        }
        val archPart = when (val arch = osArch.lowercase()) {
            "amd64", "x86_64" -> "x64"
            "aarch64", "arm64" -> "arm64"
            else -> arch
        }
        return "$osPart-$archPart"
    }

    /** The executable's file name on [platform]. */
    fun binaryName(platform: String): String =
        if (platform.startsWith("win32")) "${SidecarLocator.BINARY_NAME}.exe" else SidecarLocator.BINARY_NAME
}
