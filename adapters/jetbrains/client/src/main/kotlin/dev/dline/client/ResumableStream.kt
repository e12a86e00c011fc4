package dev.dline.client

import com.connectrpc.ConnectException
import com.connectrpc.ServerOnlyStreamInterface
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlin.time.Duration
import kotlin.time.Duration.Companion.seconds

/**
 * How long a stream that ended waits for its sidecar to exit before deciding the sidecar ended
 * it on purpose. A killed sidecar's socket closes a moment before its exit is observed.
 */
internal val STREAM_DEATH_GRACE: Duration = 3.seconds

/**
 * A server stream that survives sidecar restarts: when the stream ends because its sidecar
 * died, it waits for the supervisor's next sidecar and opens the stream again with the last
 * seq it delivered (the protocol's `after_seq`). With [dropSeen], messages whose seq is not
 * above that are dropped, so a consumer never sees one twice.
 *
 * The flow completes when the sidecar ends the stream while staying alive, and throws
 * [DlineException] when the sidecar answers an error while staying alive (e.g. not_found).
 */
internal fun <Req : Any, Res : Any> ConnectionSource.resumableStream(
    startAfter: Long,
    open: suspend SidecarConnection.() -> ServerOnlyStreamInterface<Req, Res>,
    request: (afterSeq: Long) -> Req,
    seqOf: (Res) -> Long,
    dropSeen: Boolean,
): Flow<Res> = flow {
    var after = startAfter
    while (true) {
        val connection = connection()
        val stream = connection.open()
        var failure: DlineException? = null
        try {
            stream.sendAndClose(request(after)).onFailure { e ->
                throw if (e is ConnectException) e else ConnectException(com.connectrpc.Code.UNKNOWN, exception = e)
            }
            for (message in stream.responseChannel()) {
                val seq = seqOf(message)
                if (dropSeen && java.lang.Long.compareUnsigned(seq, after) <= 0) continue
                emit(message)
                if (java.lang.Long.compareUnsigned(seq, after) > 0) after = seq
            }
        } catch (e: ConnectException) {
            failure = DlineException.from(e)
        } finally {
            stream.receiveClose()
        }
        // An error the sidecar answered comes from a live sidecar: no need to wait and see.
        if (failure != null && failure.code != com.connectrpc.Code.UNAVAILABLE) throw failure
        if (!diedWithin(connection, STREAM_DEATH_GRACE)) {
            failure?.let { throw it }
            return@flow
        }
        // The sidecar died: connection() waits for the supervisor's next one, then we resume.
    }
}
