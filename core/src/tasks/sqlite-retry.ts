/**
 * SQLite's busy timeout (set by SqliteFactory) covers most contention between sidecars, but a
 * few cases return SQLITE_BUSY at once (a read transaction that must upgrade, a WAL recovery
 * in progress). Writes go through `withBusyRetry` so that a client never sees SQLITE_BUSY for
 * a lost race that a short wait resolves.
 */
const RETRYABLE = new Set(["SQLITE_BUSY", "SQLITE_BUSY_SNAPSHOT", "SQLITE_BUSY_RECOVERY", "SQLITE_LOCKED"]);

export function isBusyError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && RETRYABLE.has(code);
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Runs `fn`, retrying up to `attempts` times with a growing pause while SQLite reports busy. */
export function withBusyRetry<T>(fn: () => T, attempts = 8): T {
  for (let attempt = 1; ; attempt++) {
    try {
      return fn();
    } catch (err) {
      if (!isBusyError(err) || attempt >= attempts) throw err;
      sleepSync(Math.min(200, 5 * 2 ** attempt) + Math.random() * 10);
    }
  }
}
