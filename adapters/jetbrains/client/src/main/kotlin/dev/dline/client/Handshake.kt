package dev.dline.client

import com.squareup.moshi.JsonDataException
import com.squareup.moshi.JsonEncodingException
import com.squareup.moshi.JsonReader
import okio.Buffer
import java.io.IOException

/**
 * The one line a sidecar prints on stdout when it is ready (docs/protocol.md, "Handshake and authentication"):
 * `{"dline":"ready","protocol":1,"version":"…","url":"http://127.0.0.1:PORT","token":"…","pid":N}`.
 */
data class Handshake(val protocol: Int, val version: String, val url: String, val token: String, val pid: Long) {
    /** Never prints the token: handshakes end up in logs and exception messages. */
    override fun toString(): String = "Handshake(protocol=$protocol, version=$version, url=$url, pid=$pid)"

    companion object {
        /** The protocol version this client speaks; a sidecar announcing another one is refused. */
        const val SUPPORTED_PROTOCOL = 1

        /** Parses the handshake line; throws [SidecarStartException] naming what is wrong. */
        fun parse(line: String): Handshake {
            val fields = try {
                readFlatObject(line)
            } catch (e: IOException) {
                throw SidecarStartException("The sidecar printed something that is not a handshake: ${line.take(200)}", e)
            } catch (e: JsonDataException) {
                throw SidecarStartException("The sidecar printed something that is not a handshake: ${line.take(200)}", e)
            }
            val url = fields["url"] as? String
            val token = fields["token"] as? String
            val pid = (fields["pid"] as? Double)?.toLong()
            val protocol = (fields["protocol"] as? Double)?.toInt()
            if (fields["dline"] != "ready" || url == null || token == null || pid == null || protocol == null) {
                throw SidecarStartException("The sidecar's handshake is incomplete: ${redact(line, token).take(200)}")
            }
            if (!url.startsWith("http://")) {
                // connect-kotlin speaks HTTP over TCP only: a unix: listener cannot be used from here.
                throw SidecarStartException("The sidecar listens on $url; this client needs an http:// address.", permanent = true)
            }
            if (protocol != SUPPORTED_PROTOCOL) {
                throw SidecarStartException(
                    "The sidecar speaks protocol $protocol; this client speaks protocol $SUPPORTED_PROTOCOL. Update the plugin or the sidecar.",
                    permanent = true,
                )
            }
            return Handshake(protocol, fields["version"] as? String ?: "", url, token, pid)
        }

        private fun redact(line: String, token: String?): String = if (token.isNullOrEmpty()) line else line.replace(token, "<token>")

        /** Reads one JSON object of scalar values; nested values are skipped. */
        private fun readFlatObject(line: String): Map<String, Any?> {
            val reader = JsonReader.of(Buffer().writeUtf8(line))
            val fields = mutableMapOf<String, Any?>()
            reader.beginObject()
            while (reader.hasNext()) {
                val name = reader.nextName()
                fields[name] = when (reader.peek()) {
                    JsonReader.Token.STRING -> reader.nextString()
                    JsonReader.Token.NUMBER -> reader.nextDouble()
                    JsonReader.Token.BOOLEAN -> reader.nextBoolean()
                    else -> reader.skipValue().let { null }
                }
            }
            reader.endObject()
            if (reader.peek() != JsonReader.Token.END_DOCUMENT) throw JsonEncodingException("trailing data")
            return fields
        }
    }
}
