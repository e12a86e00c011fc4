package dev.dline.client

/**
 * Model-supplied text (replies, tool summaries, commands, task titles) shown with its control
 * characters made visible, as every Dline client does: an escape sequence or a direction override
 * could otherwise make the text shown differ from the text approved. Newlines and tabs stay (a CR LF
 * pair is a newline); every other C0 or C1 control character, DEL and the Unicode direction
 * embeddings, overrides and isolates become escapes such as `\r`, `\e`, `\x07`, `\u202e`.
 */
object VisibleText {
    private val control = Regex("\r\n|[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\u202a-\\u202e\\u2066-\\u2069]")
    private val named = mapOf('\r' to "\\r", '\u001b' to "\\e", '\b' to "\\b", '\u000c' to "\\f", '\u000b' to "\\v", '\u0000' to "\\0")

    /** The text with its control characters as escapes; newlines and tabs kept. */
    fun of(text: String): String = control.replace(text) { match ->
        val c = match.value
        if (c == "\r\n") {
            "\n"
        } else {
            named[c[0]] ?: c[0].code.let { code ->
                if (code <= 0xff) "\\x" + code.toString(16).padStart(2, '0') else "\\u" + code.toString(16).padStart(4, '0')
            }
        }
    }

    /** One line (list rows, prompts): newlines and tabs shown as `\n` and `\t` too. */
    fun line(text: String): String = of(text).replace("\n", "\\n").replace("\t", "\\t")
}
