package dev.dline.client

import com.connectrpc.ConnectException
import com.connectrpc.ResponseMessage

/** Runs one unary call on the live connection and returns its message, or throws [DlineException]. */
internal suspend fun <T> ConnectionSource.unary(call: suspend SidecarConnection.() -> ResponseMessage<T>): T {
    val connection = connection()
    val response = try {
        connection.call()
    } catch (e: ConnectException) {
        throw DlineException.from(e)
    }
    return when (response) {
        is ResponseMessage.Success -> response.message
        is ResponseMessage.Failure -> throw DlineException.from(response.cause)
    }
}
