package dev.dline.client

import com.sun.net.httpserver.HttpExchange
import com.sun.net.httpserver.HttpServer
import dline.v1.Task.StatusChanged
import dline.v1.Task.SubscribeRequest
import dline.v1.Task.SubscribeResponse
import java.io.DataInputStream
import java.io.OutputStream
import java.net.InetAddress
import java.net.InetSocketAddress
import java.nio.ByteBuffer
import java.nio.file.Files
import java.nio.file.Path
import java.nio.file.StandardOpenOption
import kotlin.system.exitProcess

/**
 * Misbehaving sidecars, each named for how it fails (as vscode-languageserver-node's
 * crashServer.ts). Run as a separate process through [FakeSidecars.script]:
 * - `never-handshakes`: prints nothing and waits.
 * - `prints-garbage`: prints a line that is not a handshake.
 * - `exits-before-handshake`: writes to stderr and exits 3.
 * - `crashes-after-handshake`: hands shake, then exits 1.
 * - `dies-mid-stream`: serves TaskService/Subscribe with events seq 1..6 of task "t1". The first
 *   process (no marker in FAKE_STATE) sends 3 events and dies; later ones resend the last event
 *   they were told was seen (a duplicate the client must drop), then the rest, then end the
 *   stream. Each request's after_seq is appended to FAKE_STATE/after_seq.
 * - `slow-stream`: serves Subscribe with event 1, then event 2 eleven seconds later, then ends:
 *   longer than connect-kotlin's default 10 s deadline, which must not apply to streams.
 */
object FakeSidecar {
    @JvmStatic
    fun main(args: Array<String>) {
        when (args.firstOrNull()) {
            "never-handshakes" -> waitForStdinEnd()

            "prints-garbage" -> {
                println("hello, I am not a handshake")
                waitForStdinEnd()
            }

            "exits-before-handshake" -> {
                System.err.println("fake sidecar: cannot start")
                exitProcess(3)
            }

            "crashes-after-handshake" -> {
                println(
                    """{"dline":"ready","protocol":1,"version":"fake","url":"http://127.0.0.1:9","token":"t","pid":${ProcessHandle.current().pid()}}""",
                )
                System.out.flush()
                Thread.sleep(50)
                exitProcess(1)
            }

            "dies-mid-stream" -> diesMidStream(Path.of(System.getenv("FAKE_STATE")))

            "slow-stream" -> slowStream()

            else -> {
                System.err.println("unknown mode ${args.toList()}")
                exitProcess(2)
            }
        }
    }

    private fun waitForStdinEnd() {
        do {
            val read = System.`in`.read()
        } while (read >= 0)
        exitProcess(0)
    }

    private fun diesMidStream(state: Path) {
        val token = "fake-token-" + ProcessHandle.current().pid()
        val firstProcess = !Files.exists(state.resolve("died-once"))
        val server = HttpServer.create(InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0)
        server.createContext("/dline.v1.TaskService/Subscribe") { exchange ->
            val input = DataInputStream(exchange.requestBody)
            input.readByte()
            val body = ByteArray(input.readInt()).also(input::readFully)
            val request = SubscribeRequest.parseFrom(body)
            Files.writeString(state.resolve("after_seq"), "${request.afterSeq}\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND)
            exchange.responseHeaders.add("Content-Type", "application/connect+proto")
            exchange.sendResponseHeaders(200, 0)
            val out = exchange.responseBody
            if (exchange.requestHeaders.getFirst("Authorization") != "Bearer $token") {
                endStream(out, """{"error":{"code":"unauthenticated","message":"Missing or wrong bearer token."}}""")
                return@createContext
            }
            if (firstProcess) {
                for (seq in request.afterSeq + 1..request.afterSeq + 3) sendEvent(out, seq)
                Files.createFile(state.resolve("died-once"))
                Runtime.getRuntime().halt(137)
            }
            for (seq in maxOf(request.afterSeq, 1)..6L) sendEvent(out, seq)
            endStream(out, "{}")
        }
        server.start()
        val port = server.address.port
        println(
            """{"dline":"ready","protocol":1,"version":"fake","url":"http://127.0.0.1:$port","token":"$token","pid":${ProcessHandle.current().pid()}}""",
        )
        System.out.flush()
        waitForStdinEnd()
    }

    private fun slowStream() {
        val server = HttpServer.create(InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0)
        server.createContext("/dline.v1.TaskService/Subscribe") { exchange ->
            exchange.requestBody.readAllBytes()
            exchange.responseHeaders.add("Content-Type", "application/connect+proto")
            exchange.sendResponseHeaders(200, 0)
            sendEvent(exchange.responseBody, 1)
            Thread.sleep(11_000)
            sendEvent(exchange.responseBody, 2)
            endStream(exchange.responseBody, "{}")
        }
        server.start()
        println(handshake(server.address.port, "slow-token"))
        System.out.flush()
        waitForStdinEnd()
    }

    private fun handshake(port: Int, token: String) =
        """{"dline":"ready","protocol":1,"version":"fake","url":"http://127.0.0.1:$port","token":"$token","pid":${ProcessHandle.current().pid()}}"""

    private fun sendEvent(out: OutputStream, seq: Long) {
        val event = SubscribeResponse.newBuilder().setEvent(
            TaskEvent.newBuilder().setSeq(seq).setTaskId("t1")
                .setStatusChanged(StatusChanged.newBuilder().setStatus(TaskStatus.TASK_STATUS_RUNNING).setReason("event $seq")),
        ).build().toByteArray()
        writeEnvelope(out, 0, event)
    }

    private fun endStream(out: OutputStream, json: String) {
        writeEnvelope(out, 2, json.toByteArray())
        out.close()
    }

    private fun writeEnvelope(out: OutputStream, flags: Int, payload: ByteArray) {
        out.write(ByteBuffer.allocate(5).put(flags.toByte()).putInt(payload.size).array())
        out.write(payload)
        out.flush()
    }
}

/** Makes executable scripts that start [FakeSidecar] in a given mode, like a real binary would be started. */
object FakeSidecars {
    fun script(dir: Path, mode: String): Path {
        val java = Path.of(System.getProperty("java.home"), "bin", "java")
        val classpath = System.getProperty("java.class.path")
        val script = dir.resolve("fake-$mode.sh")
        Files.writeString(
            script,
            "#!/bin/sh\nexec '$java' -Xshare:auto -XX:TieredStopAtLevel=1 -cp '$classpath' ${FakeSidecar::class.java.name} '$mode'\n",
        )
        script.toFile().setExecutable(true)
        return script
    }
}
