package dev.dline.client

import java.nio.file.Path
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds

/** How to start one sidecar process. From Java: `new SidecarLaunch(binary)` and the overloads after it. */
data class SidecarLaunch @JvmOverloads constructor(
    /** The dline-core executable (see [SidecarLocator]). */
    val binary: Path,
    /** Extra arguments after `serve`. Never a fixed port: the sidecar picks a free one by default. */
    val args: List<String> = emptyList(),
    val workingDirectory: Path? = null,
    /** Variables added to (or replacing) the inherited environment, e.g. DLINE_DIR in tests. */
    val environment: Map<String, String> = emptyMap(),
    /** When false the sidecar gets only [environment]: tests use this for isolation. */
    val inheritEnvironment: Boolean = true,
    /** The sidecar's stderr is appended here; null discards it (the sidecar also keeps its own log file). */
    val stderrLog: Path? = null,
    /** A sidecar that has not printed its handshake by then is killed. Default 30 s: slow machines exist. */
    val handshakeTimeout: Duration = 30.seconds,
    /** After closing stdin, how long to wait before terminating, then killing, the process. */
    val stopTimeout: Duration = 10.seconds,
)
