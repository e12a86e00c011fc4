/**
 * A call's AbortSignal, made only when something asks for it. Most unary handlers never look at
 * their signal, and an AbortController with its signal costs several microseconds per call (the
 * signal's EventTarget set-up, and an abort event when the call ends). Asked for after the call
 * ended, it is made already aborted with the reason the call ended with.
 */
export class CallSignal {
  private controller: AbortController | undefined;
  private ended = false;
  private reason: unknown;
  private unlink: (() => void) | undefined;

  /** `linked` (a shutdown signal) ends the call too. */
  constructor(private readonly linked?: AbortSignal) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = new AbortController();
      this.controller = controller;
      if (this.ended) {
        controller.abort(this.reason);
      } else if (this.linked) {
        const linked = this.linked;
        const onLinkedAbort = () => this.abort(linked.reason);
        if (linked.aborted) onLinkedAbort();
        else {
          linked.addEventListener("abort", onLinkedAbort, { once: true });
          this.unlink = () => linked.removeEventListener("abort", onLinkedAbort);
        }
      }
    }
    return this.controller.signal;
  }

  /** Ends the call: the first reason stays. */
  abort(reason: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.reason = reason;
    this.unlink?.();
    this.controller?.abort(reason);
  }
}
