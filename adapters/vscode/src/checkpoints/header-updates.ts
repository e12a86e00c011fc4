/**
 * Orders the updates of the chat's checkpoint header. A status read (GetStatus, asked when a
 * task opens or its status changes) that was asked before an action's answer arrived (Disable
 * Checkpoints, Retry) is older than that answer: shown after it, it would put back the state
 * the action just changed (a read asked while the core restarted answered "ready" after Disable
 * answered "disabled").
 */
export class HeaderUpdates {
  private generation = 0;

  /** Before a status read: the returned check says whether its answer may still be shown. */
  read(): () => boolean {
    const asked = this.generation;
    return () => asked === this.generation;
  }

  /** An action's answer is shown now: every read asked before it is out of date. */
  answered(): void {
    this.generation++;
  }
}
