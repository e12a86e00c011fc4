import type { TaskEvent } from "../../../../core/src/gen/dline/v1/task_pb.js";
import type { SidecarSupervisor } from "../sidecar/sidecar-supervisor.js";
import type { Log } from "../sidecar/log.js";

/**
 * Follows one task's events for as long as it is open, across dropped streams and sidecar
 * restarts: every reconnect passes the last seq seen as after_seq, so nothing is lost or
 * repeated.
 */
export class TaskStream {
  private lastSeq = 0n;
  private readonly controller = new AbortController();
  private closed = false;

  constructor(
    readonly taskId: string,
    private readonly supervisor: SidecarSupervisor,
    private readonly onEvent: (event: TaskEvent) => void,
    private readonly log: Log,
    afterSeq = 0n,
  ) {
    this.lastSeq = afterSeq;
    void this.run();
  }

  get seq(): bigint {
    return this.lastSeq;
  }

  close(): void {
    this.closed = true;
    this.controller.abort();
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.closed) {
      try {
        const core = await this.supervisor.whenRunning();
        const stream = core.clients.tasks.subscribe(
          { taskId: this.taskId, afterSeq: this.lastSeq },
          { signal: this.controller.signal },
        );
        let received = false;
        for await (const res of stream) {
          const event = res.event;
          if (!event || event.seq <= this.lastSeq) continue;
          this.lastSeq = event.seq;
          received = true;
          failures = 0;
          this.onEvent(event);
        }
        // The server ended the stream (it does when it stops): resubscribe, backing off while
        // streams end with nothing new.
        failures = received ? 0 : failures + 1;
      } catch (err) {
        if (this.closed) return;
        failures++;
        this.log.warn(
          `task ${this.taskId}: event stream interrupted (${(err as Error).message}); resuming after seq ${this.lastSeq}`,
        );
      }
      if (!this.closed) await delay(Math.min(5_000, 200 * 2 ** Math.min(failures, 5)));
    }
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
