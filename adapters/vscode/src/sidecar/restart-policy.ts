/**
 * When to restart a sidecar that died: exponential backoff, reset once a run has been healthy
 * for a while, and a give-up point so that a binary that crashes at start does not loop forever.
 * Pure: the supervisor asks it, it never touches a process or a timer.
 */
export interface RestartPolicyOptions {
  /** First delay (ms). */
  initialDelayMs: number;
  /** Ceiling of the delay (ms). */
  maxDelayMs: number;
  /** A run that lasted this long counts as healthy: the next failure starts from the first delay. */
  healthyAfterMs: number;
  /** Consecutive unhealthy failures after which the supervisor stops trying. */
  maxConsecutiveFailures: number;
}

/** The clients' one restart policy (docs/clients.md): 5 restarts, 250 ms doubling up to 8 s, forgotten after 3 minutes of running. */
export const DEFAULT_RESTART_POLICY: RestartPolicyOptions = {
  initialDelayMs: 250,
  maxDelayMs: 8_000,
  healthyAfterMs: 180_000,
  maxConsecutiveFailures: 5,
};

export type RestartDecision = { restart: true; delayMs: number; attempt: number } | { restart: false; attempt: number };

export class RestartPolicy {
  private failures = 0;

  constructor(private readonly options: RestartPolicyOptions = DEFAULT_RESTART_POLICY) {}

  /** Called when a sidecar exited unexpectedly after running for `ranForMs`. */
  onExit(ranForMs: number): RestartDecision {
    if (ranForMs >= this.options.healthyAfterMs) this.failures = 0;
    this.failures++;
    if (this.failures > this.options.maxConsecutiveFailures) return { restart: false, attempt: this.failures };
    const delayMs = Math.min(this.options.maxDelayMs, this.options.initialDelayMs * 2 ** (this.failures - 1));
    return { restart: true, delayMs, attempt: this.failures };
  }

  /** A start that failed before the handshake counts like a run of zero length. */
  onStartFailure(): RestartDecision {
    return this.onExit(0);
  }

  /** The user asked for a restart: start counting again. */
  reset(): void {
    this.failures = 0;
  }
}
