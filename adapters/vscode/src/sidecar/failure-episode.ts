/**
 * One stretch of time during which the core cannot run, from its first failed start to the
 * next successful one. The person is told once per stretch, not at every retry. Pure.
 */
export class FailureEpisode {
  private current: { first: Error; last: Error; attempts: number } | undefined;

  /** A failed start; true when it opens a new episode (the one worth telling). */
  fail(err: Error): boolean {
    if (this.current) {
      this.current.last = err;
      this.current.attempts++;
      return false;
    }
    this.current = { first: err, last: err, attempts: 1 };
    return true;
  }

  /** The core runs again: the episode is over. True when there was one. */
  recover(): boolean {
    const had = this.current !== undefined;
    this.current = undefined;
    return had;
  }

  get failing(): boolean {
    return this.current !== undefined;
  }

  /** The latest reason, for the chat's header and the status bar. */
  get lastError(): Error | undefined {
    return this.current?.last;
  }
}
