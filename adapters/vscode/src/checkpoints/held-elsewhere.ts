/**
 * A checkpoint call (Compare, Restore and its Undo, Restore All, View Changes) waits while another
 * Dline window holds the workspace's checkpoint repository (its baseline of a large workspace, a
 * restore), up to two minutes; VS Code waited in silence. While a call of one action has not
 * answered, the core's status is asked every second; once it names the other window's process
 * (GetStatus's waitingForPid, answered at once), the core's sentence is shown, once per action,
 * until the call answers. The action then goes on as before.
 */
import { MESSAGES } from "../../../../core/src/checkpoints/workspace-guard.js";

/** How long a call runs before the core is asked whether another window holds it up, and how often after. */
export const ASK_EVERY_MS = 1000;

/** What the editor shows while a call waits (a progress notification); `end` takes it away. */
export interface WaitNotice {
  end(): void;
}

export class HeldElsewhere {
  private told = false;

  constructor(
    /** The process GetStatus names as holding the repository; 0 or undefined when none does. */
    private readonly holder: () => Promise<number | undefined>,
    /** Shows the sentence; called at most once. */
    private readonly show: (sentence: string) => WaitNotice,
  ) {}

  /** Runs one call of the action, saying so while it waits for another window. */
  async during<T>(call: () => Promise<T>): Promise<T> {
    let answered = false;
    let notice: WaitNotice | undefined;
    // Asked again every second, not one at a time: a status read that came while the other
    // window's hold was still short waits for it as the call does (the core's skip list).
    const timer = setInterval(() => {
      void this.holder().then(
        (pid) => {
          if (answered || this.told || !pid) return;
          this.told = true;
          clearInterval(timer);
          notice = this.show(MESSAGES.waitingForLock(pid));
        },
        () => undefined, // the call itself says what is wrong
      );
    }, ASK_EVERY_MS);
    try {
      return await call();
    } finally {
      answered = true;
      clearInterval(timer);
      notice?.end();
    }
  }
}
