package dev.dline.client

import java.io.BufferedReader
import java.io.IOException
import java.io.InputStreamReader
import java.lang.ProcessBuilder.Redirect
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ExecutionException
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException

/**
 * One running dline-core process: started with `serve`, its handshake read from the first line
 * of stdout, stderr appended to a log file. stdin stays an open pipe; closing it is how the
 * sidecar is told to stop (it also stops by itself if this JVM dies, since the pipe closes).
 */
class SidecarProcess private constructor(val handshake: Handshake, private val process: Process, private val launch: SidecarLaunch) {
    val pid: Long get() = process.pid()

    private val exit: CompletableFuture<Int> = process.onExit().thenApply { it.exitValue() }

    /**
     * Completes with the exit code once the process is gone (whoever stopped it). Each read is a
     * fresh copy: a coroutine that awaits it and is cancelled cancels only its copy.
     */
    val exited: CompletableFuture<Int> get() = exit.copy()

    val isAlive: Boolean get() = process.isAlive

    /**
     * Closes stdin and waits for the sidecar to flush and exit; terminates it, then kills it,
     * if it does not exit within [SidecarLaunch.stopTimeout]. Returns the exit code.
     */
    fun stop(): Int {
        try {
            process.outputStream.close()
        } catch (_: IOException) {
            // Already closed or the process is gone: waiting below tells which.
        }
        if (process.waitFor(launch.stopTimeout.inWholeMilliseconds, TimeUnit.MILLISECONDS)) return process.exitValue()
        process.destroy()
        if (process.waitFor(2, TimeUnit.SECONDS)) return process.exitValue()
        process.destroyForcibly()
        return process.waitFor()
    }

    /** Kills the process at once (SIGKILL): no flushing. For emergencies and crash tests. */
    fun kill() {
        process.destroyForcibly()
    }

    override fun toString(): String = "SidecarProcess(pid=$pid, url=${handshake.url})"

    companion object {
        /** Starts the sidecar and returns once it has handed shake; throws [SidecarStartException] otherwise. */
        @JvmStatic
        @Throws(SidecarStartException::class, InterruptedException::class)
        fun start(launch: SidecarLaunch): SidecarProcess {
            // Checked first: these can never succeed by trying again, and the supervisor says so at once.
            if (!Files.isRegularFile(launch.binary)) {
                throw SidecarStartException("The sidecar ${launch.binary} does not exist.", permanent = true)
            }
            if (!Files.isExecutable(launch.binary)) {
                throw SidecarStartException("The sidecar ${launch.binary} is not executable (chmod +x it).", permanent = true)
            }
            val builder = ProcessBuilder(listOf(launch.binary.toString(), "serve") + launch.args)
            launch.workingDirectory?.let { builder.directory(it.toFile()) }
            val env = builder.environment()
            if (!launch.inheritEnvironment) env.clear()
            env.putAll(launch.environment)
            builder.redirectInput(Redirect.PIPE)
            builder.redirectOutput(Redirect.PIPE)
            builder.redirectError(
                launch.stderrLog?.let { log ->
                    log.parent?.let { Files.createDirectories(it) }
                    Redirect.appendTo(log.toFile())
                } ?: Redirect.DISCARD,
            )
            val process = try {
                builder.start()
            } catch (e: IOException) {
                // The OS refused to run it (e.g. a program for another architecture): trying again cannot help.
                throw SidecarStartException("Cannot start ${launch.binary}: ${e.message}", e, permanent = true)
            }
            val firstLine = readStdout(process)
            val line = try {
                firstLine.get(launch.handshakeTimeout.inWholeMilliseconds, TimeUnit.MILLISECONDS)
            } catch (e: TimeoutException) {
                process.destroyForcibly()
                throw SidecarStartException(
                    "The sidecar did not print its handshake within ${launch.handshakeTimeout}${logHint(launch)}.",
                )
            } catch (e: InterruptedException) {
                // The caller gave up (the project closed while starting): leave no orphan behind.
                process.destroyForcibly()
                throw e
            } catch (e: ExecutionException) {
                process.destroyForcibly()
                val code = if (process.waitFor(2, TimeUnit.SECONDS)) process.exitValue().toString() else "unknown"
                throw SidecarStartException("The sidecar exited (code $code) before its handshake${logHint(launch)}.", e.cause)
            }
            val handshake = try {
                Handshake.parse(line)
            } catch (e: SidecarStartException) {
                process.destroyForcibly()
                throw e
            }
            return SidecarProcess(handshake, process, launch)
        }

        private fun logHint(launch: SidecarLaunch) = launch.stderrLog?.let { "; see $it" } ?: ""

        /**
         * Completes with the first stdout line, then keeps draining stdout so the pipe never fills
         * (the sidecar prints nothing else there, but a misbehaving one might).
         */
        private fun readStdout(process: Process): CompletableFuture<String> {
            val first = CompletableFuture<String>()
            val reader = Thread({
                try {
                    BufferedReader(InputStreamReader(process.inputStream, StandardCharsets.UTF_8)).use { input ->
                        val line = input.readLine()
                        if (line == null) {
                            first.completeExceptionally(IOException("stdout closed before a handshake line"))
                            return@use
                        }
                        first.complete(line)
                        val sink = CharArray(8192)
                        do {
                            val read = input.read(sink)
                        } while (read >= 0)
                    }
                } catch (e: IOException) {
                    first.completeExceptionally(e)
                }
            }, "dline-sidecar-stdout-${process.pid()}")
            reader.isDaemon = true
            reader.start()
            return first
        }
    }
}
