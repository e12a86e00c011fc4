package dev.dline.client

import com.connectrpc.ProtocolClientConfig
import com.connectrpc.extensions.GoogleJavaProtobufStrategy
import com.connectrpc.impl.ProtocolClient
import com.connectrpc.okhttp.ConnectOkHttpClient
import dline.v1.CheckpointServiceClient
import dline.v1.HistoryServiceClient
import dline.v1.ImportServiceClient
import dline.v1.SettingsServiceClient
import dline.v1.SystemServiceClient
import dline.v1.TaskServiceClient
import kotlinx.coroutines.Dispatchers
import okhttp3.OkHttpClient

/**
 * The generated clients of one sidecar process ([generation] counts the processes a supervisor
 * started, from 1). Built once per handshake: the URL and the token change with every start.
 */
class SidecarConnection internal constructor(
    val generation: Int,
    val process: SidecarProcess,
    baseHttp: OkHttpClient,
    options: ClientOptions,
) {
    val handshake: Handshake get() = process.handshake

    private val protocolClient = ProtocolClient(
        httpClient = ConnectOkHttpClient(
            baseHttp.newBuilder().addInterceptor(BearerTokenInterceptor(process.handshake.token)).build(),
        ),
        config = ProtocolClientConfig(
            host = process.handshake.url,
            serializationStrategy = GoogleJavaProtobufStrategy(),
            ioCoroutineContext = Dispatchers.IO,
            // connect-kotlin's default cuts every call, streams included, after 10 s: task
            // streams live as long as the task window, so streams get no deadline at all.
            timeoutOracle = { method -> if (method.streamType == com.connectrpc.StreamType.UNARY) options.unaryTimeout else null },
        ),
    )

    val system = SystemServiceClient(protocolClient)
    val settings = SettingsServiceClient(protocolClient)
    val tasks = TaskServiceClient(protocolClient)
    val history = HistoryServiceClient(protocolClient)
    val checkpoints = CheckpointServiceClient(protocolClient)
    val imports = ImportServiceClient(protocolClient)

    override fun toString(): String = "SidecarConnection(generation=$generation, $process)"
}

/** Adds `Authorization: Bearer <token>` to every request; the sidecar refuses anything else. */
internal class BearerTokenInterceptor(private val token: String) : okhttp3.Interceptor {
    override fun intercept(chain: okhttp3.Interceptor.Chain): okhttp3.Response =
        chain.proceed(chain.request().newBuilder().header("Authorization", "Bearer $token").build())
}
