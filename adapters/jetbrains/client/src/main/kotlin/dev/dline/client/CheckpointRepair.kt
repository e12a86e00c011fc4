package dev.dline.client

import dline.v1.CheckpointOuterClass.GetStatusResponse
import java.util.concurrent.ConcurrentHashMap

/**
 * Checkpoints that are ready after the core repaired their store (a damaged index rebuilt, a
 * damaged HEAD put back, a damaged repository set aside and started again) say so in their
 * status's sentence, with where the damaged files were kept (docs/checkpoints.md, "Damage to the
 * shadow repository"). [note] picks that sentence out of a status; [CheckpointRepairNotices]
 * lets a UI tell it once.
 */
object CheckpointRepair {
    /** The core's sentence for checkpoints that are ready with nothing more to say. */
    const val READY = "Checkpoints are ready."

    /**
     * The sentence of a ready status that says more than "ready"; null for plain ready and for
     * every other state. [state] is a CheckpointState name ("CHECKPOINT_STATE_READY", as the
     * status stream sends it).
     */
    fun note(state: String, message: String): String? {
        val ready = state.removePrefix("CHECKPOINT_STATE_").equals("READY", ignoreCase = true)
        val text = message.trim()
        return if (ready && text.isNotEmpty() && text != READY) text else null
    }

    /** The same for a GetStatus (or Retry) answer. */
    fun note(status: GetStatusResponse): String? = note(status.state.name, status.message)
}

/**
 * The repair sentences told in one session (a project window): the status stream of every task
 * and every GetStatus read repeat a repair's sentence, the person reads it once. Thread-safe.
 */
class CheckpointRepairNotices {
    private val told: MutableSet<String> = ConcurrentHashMap.newKeySet()

    /** The sentence to tell now: the status's repair note the first time it is seen, else null. */
    fun toTell(state: String, message: String): String? = CheckpointRepair.note(state, message)?.takeIf { told.add(it) }

    fun toTell(status: GetStatusResponse): String? = toTell(status.state.name, status.message)
}
