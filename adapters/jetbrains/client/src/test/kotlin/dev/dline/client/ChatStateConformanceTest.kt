package dev.dline.client

import com.google.protobuf.util.JsonFormat
import com.squareup.moshi.Moshi
import com.squareup.moshi.Types
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestFactory
import java.nio.file.Files
import java.nio.file.Path

/**
 * [ChatState] folds every event stream recorded from the real sidecar in
 * test/conformance/fold/fixtures to the chat state the core itself has at the end of it (its
 * GetTask, reduced to what every client shows), as the VS Code and Neovim folds do in their
 * own suites. The events are Connect JSON, read with protobuf's JsonFormat (protobuf-java-util
 * comes with connect-kotlin-google-java-ext).
 */
class ChatStateConformanceTest {
    private val dir: Path = Repo.root.resolve("test/conformance/fold/fixtures")
    private val moshi = Moshi.Builder().build()
    private val mapAdapter = moshi.adapter<Map<String, Any?>>(
        Types.newParameterizedType(Map::class.java, String::class.java, Any::class.java),
    )
    private val parser = JsonFormat.parser().ignoringUnknownFields()

    private fun fixtures(): List<Map<String, Any?>> =
        Files.list(dir).use { files -> files.filter { it.toString().endsWith(".json") }.sorted().toList() }
            .map { mapAdapter.fromJson(Files.readString(it))!! }

    @Test
    fun `the recorded fixtures are all there`() {
        assertEquals(
            listOf(
                "approvals-with-edits",
                "compaction",
                "denial-with-feedback",
                "restore-with-rewind",
                "sidecar-restart-interrupted",
                "streaming",
            ),
            fixtures().map { it["name"] },
        )
    }

    @TestFactory
    fun `folds every recorded stream to the core's own view of the task`(): List<DynamicTest> = fixtures().map { fixture ->
        DynamicTest.dynamicTest("${fixture["name"]}: ${fixture["about"]}") {
            @Suppress("UNCHECKED_CAST")
            val events = (fixture["events"] as List<Any?>).map { json ->
                TaskEvent.newBuilder().also { parser.merge(moshi.adapter(Any::class.java).toJson(json), it) }.build()
            }
            val state = events.fold(ChatState(), ChatState::apply)
            assertEquals(fixture["expected"], view(state))
            assertEquals(events.last().seq, state.lastSeq, "the last seq, for a reconnect")
        }
    }

    /** The state reduced as the fixtures' expected views are (chat-fixture.ts), as JSON values. */
    private fun view(state: ChatState): Map<String, Any?> = mapOf(
        "status" to state.status.name,
        "pendingAskId" to (state.pendingAsk?.askId ?: ""),
        "messages" to state.messages.map { m ->
            buildMap {
                put("id", m.id)
                put("role", m.role.name)
                put("kind", m.kind)
                put("text", m.text)
                put("partial", m.partial)
                put("checkpointId", m.checkpointId)
                if (m.hasToolCall()) {
                    put(
                        "toolCall",
                        mapOf(
                            "toolCallId" to m.toolCall.toolCallId,
                            "status" to m.toolCall.status.name,
                            "edits" to m.toolCall.editsList.map { "${it.path} ${it.status.name}" },
                        ),
                    )
                }
            }
        },
    )
}
