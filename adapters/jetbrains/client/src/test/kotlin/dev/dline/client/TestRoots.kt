package dev.dline.client

import java.nio.file.Files
import java.nio.file.Path

/** Isolated roots for one test, as test/helpers/sidecar.ts makes them: nothing touches the real ~/.dline. */
class TestRoots(prefix: String = "dline-kt-") {
    // Under the test run's own temporary folder when there is one (TMPDIR, set by the vitest run
    // and removed after it); the JVM's java.io.tmpdir ignores TMPDIR.
    val base: Path = Files.createTempDirectory(tempRoot(), prefix)
    val home: Path = Files.createDirectories(base.resolve("home"))
    val dlineDir: Path = base.resolve("dline")
    val homeDir: Path = base.resolve("dline-home")
    val docsDir: Path = base.resolve("docs")
    val stderrLog: Path = base.resolve("sidecar.stderr")

    val env: Map<String, String> = mapOf(
        "PATH" to (System.getenv("PATH") ?: "/usr/bin:/bin"),
        "HOME" to home.toString(),
        "DLINE_DIR" to dlineDir.toString(),
        "DLINE_HOME_DIR" to homeDir.toString(),
        "DLINE_DOCS_DIR" to docsDir.toString(),
        "TMPDIR" to tempRoot().toString(),
    )

    /** A launch of [binary] (the real sidecar by default) with only these roots in its environment. */
    fun launch(binary: Path = Repo.sidecarBinary(), extraEnv: Map<String, String> = emptyMap()) = SidecarLaunch(
        binary = binary,
        workingDirectory = base,
        environment = env + extraEnv,
        inheritEnvironment = false,
        stderrLog = stderrLog,
    )
}

/** Where the repository and its built sidecar are. */
object Repo {
    val root: Path = Path.of(System.getProperty("dline.repoRoot") ?: "../../..").toAbsolutePath().normalize()

    fun sidecarBinary(): Path {
        val binary = System.getenv("DLINE_CORE")?.let(Path::of) ?: root.resolve("dist/dline-core")
        check(Files.isExecutable(binary)) {
            "$binary does not exist: build it first (npx buf generate && node scripts/build-sidecar.mjs at the repository root)."
        }
        return binary
    }
}

private fun tempRoot(): Path =
    System.getenv("TMPDIR")?.takeIf { it.isNotBlank() }?.let { Path.of(it) } ?: Path.of(System.getProperty("java.io.tmpdir"))
