package dev.dline.client

import java.io.BufferedReader
import java.io.InputStreamReader
import java.nio.file.Files
import java.nio.file.Path
import java.util.concurrent.TimeUnit

/**
 * The repository's scripted model server (test/model-server/cli.ts) as a separate process: it
 * speaks the real streaming wire formats and plays [scriptJson] (see test/model-server/script.ts).
 * Bundled once per test run with the repository's esbuild, run with node.
 */
class ModelServer private constructor(private val process: Process, val url: String) : AutoCloseable {
    override fun close() {
        process.outputStream.close()
        if (!process.waitFor(5, TimeUnit.SECONDS)) process.destroyForcibly()
    }

    companion object {
        private val bundle: Path by lazy {
            val out = Repo.root.resolve("adapters/jetbrains/client/target/model-server/model-server.mjs")
            val esbuild = Repo.root.resolve("node_modules/.bin/esbuild")
            check(Files.isExecutable(esbuild)) { "$esbuild is missing: run npm ci at the repository root." }
            val build = ProcessBuilder(
                esbuild.toString(),
                Repo.root.resolve("test/model-server/cli.ts").toString(),
                "--bundle",
                "--platform=node",
                "--format=esm",
                "--target=node20",
                "--log-level=warning",
                "--outfile=$out",
            ).inheritIO().start()
            check(build.waitFor() == 0) { "esbuild could not bundle the model server" }
            out
        }

        fun start(dir: Path, scriptJson: String): ModelServer {
            val script = Files.writeString(dir.resolve("model-script.json"), scriptJson)
            val process = ProcessBuilder("node", bundle.toString(), script.toString())
                .redirectError(ProcessBuilder.Redirect.appendTo(dir.resolve("model-server.stderr").toFile()))
                .start()
            val line = BufferedReader(InputStreamReader(process.inputStream)).readLine()
                ?: error("the model server exited before printing its URL")
            val url = Regex("\"url\":\"([^\"]+)\"").find(line)?.groupValues?.get(1) ?: error("unexpected model server line: $line")
            return ModelServer(process, url)
        }
    }
}
