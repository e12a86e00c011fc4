package dev.dline.client

import com.connectrpc.okhttp.ConnectOkHttpClient
import okhttp3.OkHttpClient
import java.net.Proxy
import kotlin.time.Duration
import kotlin.time.Duration.Companion.minutes

/** Options of the RPC side of the client. */
data class ClientOptions(
    /**
     * Deadline of each unary call; null for none. Generous (2 min) because a restore or a first
     * checkpoint on a large workspace can take long; it only guards against a hung sidecar.
     * Streams never have one.
     */
    val unaryTimeout: Duration? = 2.minutes,
) {
    companion object {
        /**
         * The HTTP client every connection derives from (one connection pool for the window).
         * Loopback only, so never through the IDE's or the system's proxy; no OkHttp read/write
         * timeouts (deadlines are the protocol's job, see [unaryTimeout]).
         */
        fun baseHttpClient(): OkHttpClient = ConnectOkHttpClient.configureClient(OkHttpClient.Builder()).proxy(Proxy.NO_PROXY).build()
    }
}
