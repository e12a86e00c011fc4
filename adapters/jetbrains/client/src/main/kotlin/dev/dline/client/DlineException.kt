package dev.dline.client

import com.connectrpc.Code
import com.connectrpc.ConnectException
import java.io.IOException

/**
 * An RPC failed. [code] is the Connect code the sidecar answered (`not_found`, `invalid_argument`,
 * `data_loss`, ...), or `unavailable` when the sidecar could not be reached; [message] is the
 * sidecar's sentence; [reason] says what a person can do about it when the sidecar says
 * (ERROR_REASON_NO_MODEL: set up a model, ...). Callers branch on [code] and [reason], never on
 * the sentence.
 */
class DlineException(
    val code: Code,
    override val message: String,
    cause: Throwable? = null,
    val reason: ErrorReason = ErrorReason.ERROR_REASON_UNSPECIFIED,
) : Exception(message, cause) {
    /** The code's wire name, e.g. "not_found". */
    val codeName: String get() = code.codeName

    override fun toString(): String = "DlineException[${code.codeName}]: $message"

    companion object {
        /**
         * Maps connect-kotlin's exception. A transport failure (connection refused or reset: the
         * sidecar is gone) comes as `unknown` wrapping an IOException; it is reported as
         * `unavailable`, as connect-es does, so callers can tell "retry later" from a bug.
         */
        fun from(e: ConnectException): DlineException {
            val transport = e.code == Code.UNKNOWN && generateSequence(e.cause) { it.cause }.any { it is IOException }
            val code = if (transport) Code.UNAVAILABLE else e.code
            val message = e.message?.takeIf { it.isNotBlank() }
                ?: if (transport) "Cannot reach the Dline sidecar: ${rootMessage(e)}" else "The sidecar answered ${e.code.codeName}."
            return DlineException(code, message, e, reasonOf(e))
        }

        /** The reason of the error's dline.v1.ErrorDetail, if it carries one. */
        private fun reasonOf(e: ConnectException): ErrorReason =
            e.details.firstOrNull { it.type.removePrefix("type.googleapis.com/") == ErrorDetail.getDescriptor().fullName }
                ?.let { runCatching { ErrorDetail.parseFrom(it.payload.toByteArray()).reason }.getOrNull() }
                ?: ErrorReason.ERROR_REASON_UNSPECIFIED

        private fun rootMessage(e: Throwable): String =
            generateSequence(e) { it.cause }.last().let { it.message ?: it.javaClass.simpleName }
    }
}
