package dev.dline.client

import java.io.BufferedReader
import java.io.InputStreamReader
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.TimeUnit

/**
 * Another Dline window holding a workspace's checkpoint repository: the checkpoint tests' driver
 * (test/checkpoints/fixtures/save-driver.ts) as a separate node process, over the same roots. It
 * makes its baseline, takes the repository's real lock and keeps it until [close] kills it
 * (SIGKILL: the lock is taken over at once). Bundled once per test run with the repository's esbuild.
 */
class LockHolder private constructor(private val process: Process) : AutoCloseable {
    val pid: Long get() = process.pid()

    override fun close() {
        process.destroyForcibly()
        process.waitFor(5, TimeUnit.SECONDS)
    }

    companion object {
        private val bundle: Path by lazy {
            val dir = Files.createDirectories(Repo.root.resolve("adapters/jetbrains/client/target/lock-holder"))
            val out = dir.resolve("save-driver.mjs")
            val esbuild = Repo.root.resolve("node_modules/.bin/esbuild")
            check(Files.isExecutable(esbuild)) { "$esbuild is missing: run npm ci at the repository root." }
            val build = ProcessBuilder(
                esbuild.toString(),
                Repo.root.resolve("test/checkpoints/fixtures/save-driver.ts").toString(),
                "--bundle",
                "--platform=node",
                "--format=esm",
                "--target=node20",
                "--packages=external",
                "--log-level=warning",
                "--outfile=$out",
            ).directory(Repo.root.toFile()).inheritIO().start()
            check(build.waitFor() == 0) { "esbuild could not bundle the checkpoint driver" }
            // Its externals (proper-lockfile) resolve from the repository's node_modules.
            val modules = dir.resolve("node_modules")
            if (!Files.exists(modules)) Files.createSymbolicLink(modules, Repo.root.resolve("node_modules"))
            out
        }

        /** Starts it for [workspace] over [roots]; returns once it holds the lock. */
        fun start(roots: TestRoots, workspace: Path): LockHolder {
            val config = """{"base":${json(roots.base)},"home":${json(roots.home)},"workspace":${json(workspace)},""" +
                """"taskId":"other-window","turns":0,"files":[],"holdLock":true}"""
            val process = ProcessBuilder("node", bundle.toString(), config)
                .redirectError(ProcessBuilder.Redirect.appendTo(roots.base.resolve("lock-holder.stderr").toFile()))
                .start()
            val out = BufferedReader(InputStreamReader(process.inputStream))
            while (true) {
                val line = out.readLine() ?: error("the lock holder exited: see ${roots.base.resolve("lock-holder.stderr")}")
                if (line == "holding") return LockHolder(process)
            }
        }

        private fun json(path: Path) = "\"" + path.toString().replace("\\", "\\\\").replace("\"", "\\\"") + "\""
    }
}
