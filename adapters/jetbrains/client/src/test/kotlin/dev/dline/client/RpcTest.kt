package dev.dline.client

import com.connectrpc.Code
import com.connectrpc.ProtocolClientConfig
import com.connectrpc.extensions.GoogleJavaProtobufStrategy
import com.connectrpc.getOrThrow
import com.connectrpc.impl.ProtocolClient
import com.connectrpc.okhttp.ConnectOkHttpClient
import dline.v1.System.HealthRequest
import dline.v1.SystemServiceClient
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import java.nio.file.Files

/** The facade against the real sidecar binary: unary calls, auth and error codes. */
class RpcTest {
    private val harness = SidecarHarness()
    private val dline = harness.dline

    @AfterEach
    fun stop() = harness.close()

    @Test
    fun `initialize and health answer with the isolated roots and the sidecar's pid`() = runBlocking {
        val init = dline.system.initialize("junit", "1", listOf(harness.roots.base.toString()))
        assertEquals(1, init.protocolVersion)
        assertEquals(harness.roots.dlineDir.resolve("data").toString(), init.dataRoot)
        assertEquals(harness.roots.homeDir.toString(), init.homeRoot)
        assertEquals(harness.roots.docsDir.toString(), init.documentsRoot)
        assertTrue(Files.exists(java.nio.file.Path.of(init.logFile)), init.logFile)
        val health = dline.system.health()
        assertEquals("ok", health.status)
        assertEquals(harness.connection().process.pid, health.pid.toLong())
    }

    @Test
    fun `a wrong bearer token is refused as unauthenticated, without leaking the real one`() = runBlocking {
        val connection = harness.connection()
        val http = ConnectOkHttpClient(
            ClientOptions.baseHttpClient().newBuilder().addInterceptor(BearerTokenInterceptor("not-the-token")).build(),
        )
        val client = SystemServiceClient(ProtocolClient(http, ProtocolClientConfig(connection.handshake.url, GoogleJavaProtobufStrategy())))
        val e = assertThrows<DlineException> {
            runBlocking { harness.supervisor.unary { client.health(HealthRequest.getDefaultInstance(), emptyMap()) }.let {} }
        }
        assertEquals(Code.UNAUTHENTICATED, e.code)
        assertFalse(e.message.contains(connection.handshake.token))
        // The facade's own calls carry the right token.
        assertEquals("ok", dline.system.health().status)
    }

    @Test
    fun `errors carry the Connect code and the sidecar's sentence`() = runBlocking {
        val unknown = assertThrows<DlineException> { runBlocking { dline.tasks.get("no-such-task") } }
        assertEquals(Code.NOT_FOUND, unknown.code)
        assertEquals("not_found", unknown.codeName)
        assertTrue(unknown.message.isNotBlank())
        val empty = assertThrows<DlineException> { runBlocking { dline.tasks.get("") } }
        assertEquals(Code.INVALID_ARGUMENT, empty.code)
        val unknownKey = assertThrows<DlineException> {
            runBlocking { dline.settings.update(SettingsScope.SETTINGS_SCOPE_GLOBAL, mapOf("noSuchSetting" to 1)) }
        }
        assertEquals(Code.INVALID_ARGUMENT, unknownKey.code)
        // No model set up: the reason says so, machine-readably.
        val noModel = assertThrows<DlineException> { runBlocking { dline.tasks.newTask(harness.roots.base.toString(), "hello", "") } }
        assertEquals(Code.FAILED_PRECONDITION, noModel.code)
        assertEquals(ErrorReason.ERROR_REASON_NO_MODEL, noModel.reason)
    }

    @Test
    fun `global settings round trip, with revisions guarding concurrent writers`() = runBlocking {
        val global = SettingsScope.SETTINGS_SCOPE_GLOBAL
        val before = dline.settings.get(global)
        val written = dline.settings.update(global, mapOf("checkpointsEnabled" to false, "customInstructions" to "be brief"))
        assertEquals(before.revision + 1, written.revision)
        val read = dline.settings.get(global)
        assertEquals(written.revision, read.revision)
        val values = Structs.toMap(read.settings)
        assertEquals(false, values["checkpointsEnabled"])
        assertEquals("be brief", values["customInstructions"])
        val resolved = dline.settings.resolve("customInstructions")
        assertEquals("be brief", Structs.fromValue(resolved.value))

        val stale = assertThrows<DlineException> {
            runBlocking { dline.settings.update(global, mapOf("customInstructions" to "late"), expectedRevision = before.revision) }
        }
        assertEquals(Code.ABORTED, stale.code)
        // A null removes the key.
        dline.settings.update(global, mapOf("customInstructions" to null), expectedRevision = read.revision)
        assertFalse(Structs.toMap(dline.settings.get(global).settings).containsKey("customInstructions"))
    }

    @Test
    fun `profiles round trip and secrets are write-only`() = runBlocking {
        val created = dline.settings.upsertProfile(
            Profile.newBuilder().setName("Local").setProvider("openai").setBaseUrl("http://127.0.0.1:1/v1")
                .setModel("m").setContextWindow(128_000).build(),
        )
        assertTrue(created.id.isNotEmpty())
        dline.settings.setSecret(created.id, "api_key", "sk-kotlin-secret")
        val listed = dline.settings.listProfiles().single { it.id == created.id }
        assertEquals("Local", listed.name)
        assertEquals(listOf("api_key"), listed.secretsSetList)
        assertFalse(listed.toString().contains("sk-kotlin-secret"))

        dline.settings.upsertProfile(listed.toBuilder().setName("Renamed").build())
        assertEquals("Renamed", dline.settings.listProfiles().single { it.id == created.id }.name)
        dline.settings.clearSecret(created.id, "api_key")
        assertEquals(emptyList<String>(), dline.settings.listProfiles().single { it.id == created.id }.secretsSetList)
        dline.settings.deleteProfile(created.id)
        assertTrue(dline.settings.listProfiles().none { it.id == created.id })
    }

    @Test
    fun `calls after the window stopped its sidecar fail as unavailable`() = runBlocking {
        assertEquals("ok", dline.system.health().status)
        harness.close()
        val e = assertThrows<DlineException> { runBlocking { dline.system.health() } }
        assertEquals(Code.UNAVAILABLE, e.code)
    }
}
