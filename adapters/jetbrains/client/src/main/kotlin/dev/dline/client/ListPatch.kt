package dev.dline.client

/**
 * The smallest edit that turns one list into another when the second mostly extends or changes
 * the first in place, as a chat does while it streams: rows [changed] (same position, different
 * value), rows [removedFrom] on removed (a rewind), then [added] rows appended. A list view
 * applies it to its model instead of rebuilding it, so a token repaints one row, not the chat,
 * and the selection stays. Rows are matched by position; [sameRow] tells whether a changed
 * position still holds the same row (else everything from there is replaced).
 */
data class ListPatch<T>(
    /** Index and new value of rows that stay but changed. */
    val changed: List<Pair<Int, T>>,
    /** Rows from this index on are removed (null: none). */
    val removedFrom: Int?,
    val added: List<T>,
) {
    val isEmpty: Boolean get() = changed.isEmpty() && removedFrom == null && added.isEmpty()

    /** Applies the patch to a mutable list (as a list model would): the result equals the new list. */
    fun applyTo(target: MutableList<T>) {
        for ((index, value) in changed) target[index] = value
        removedFrom?.let { from -> while (target.size > from) target.removeAt(target.size - 1) }
        target.addAll(added)
    }

    companion object {
        fun <T> between(old: List<T>, new: List<T>, sameRow: (T, T) -> Boolean = { a, b -> a == b }): ListPatch<T> {
            val common = minOf(old.size, new.size)
            // The first position whose row is another row (not the same one changed): everything from there is replaced.
            val firstOther = (0 until common).firstOrNull { !sameRow(old[it], new[it]) } ?: common
            val changed = (0 until firstOther).filter { old[it] != new[it] }.map { it to new[it] }
            val removedFrom = if (old.size > firstOther) firstOther else null
            return ListPatch(changed, removedFrom, new.subList(firstOther, new.size).toList())
        }
    }
}
