/**
 * Checkpoints that are ready after the core repaired their store (a damaged index rebuilt, a
 * damaged HEAD put back, a damaged repository set aside and started again) say so in their
 * status's sentence, with where the damaged files were kept (docs/checkpoints.md, "Damage to the
 * shadow repository"). The person is told once per sentence in this window; plain ready says nothing.
 */

/** The core's sentence for checkpoints that are ready with nothing more to say (core workspace-guard.ts). */
export const CHECKPOINTS_READY = "Checkpoints are ready.";

/**
 * The sentence of a ready status that says more than "ready"; undefined for plain ready and for
 * every other state. `state` is a CheckpointState name, with or without its `CHECKPOINT_STATE_`
 * prefix (a status event says "CHECKPOINT_STATE_READY", GetStatus's enum reads "READY").
 */
export function repairNote(state: string, message: string): string | undefined {
  const name = state.replace(/^CHECKPOINT_STATE_/i, "").toLowerCase();
  const text = message.trim();
  return name === "ready" && text !== "" && text !== CHECKPOINTS_READY ? text : undefined;
}

/** Shows each repair sentence once: the status stream and every GetStatus read repeat it. */
export class RepairNotices {
  private readonly shown = new Set<string>();

  constructor(private readonly show: (note: string) => void) {}

  /** Shows the sentence of a ready status the first time it is seen; says whether it did. */
  offer(state: string, message: string): boolean {
    const note = repairNote(state, message);
    if (note === undefined || this.shown.has(note)) return false;
    this.shown.add(note);
    this.show(note);
    return true;
  }
}
