package dev.dline.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

class HandshakeTest {
    private val good = """{"dline":"ready","protocol":1,"version":"0.1.0","url":"http://127.0.0.1:4242","token":"c2VjcmV0","pid":77}"""

    @Test
    fun `reads every field of a ready line`() {
        assertEquals(Handshake(1, "0.1.0", "http://127.0.0.1:4242", "c2VjcmV0", 77), Handshake.parse(good))
    }

    @Test
    fun `never shows the token when printed`() {
        assertFalse(Handshake.parse(good).toString().contains("c2VjcmV0"))
    }

    @Test
    fun `refuses lines that are not a complete handshake for this client`() {
        val bad = listOf(
            "hello" to "not a handshake",
            """{"dline":"ready","protocol":1,"url":"http://127.0.0.1:1","pid":1}""" to "incomplete",
            """{"dline":"starting","protocol":1,"url":"http://127.0.0.1:1","token":"x","pid":1}""" to "incomplete",
            """{"dline":"ready","protocol":1,"url":"unix:/tmp/s.sock","token":"x","pid":1}""" to "http://",
            """{"dline":"ready","protocol":2,"url":"http://127.0.0.1:1","token":"x","pid":1}""" to "protocol 2",
            """{"dline":"ready","protocol":1,"url":"http://127.0.0.1:1","token":"x","pid":1} trailing""" to "not a handshake",
        )
        for ((line, expected) in bad) {
            val e = assertThrows<SidecarStartException>(line) { Handshake.parse(line) }
            assertTrue(e.message!!.contains(expected), "${e.message} should mention $expected")
        }
    }
}
