import type * as http from "node:http";
import { answerUnavailable } from "./unavailable.js";

export type RequestListener = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/**
 * A request listener that is built after the server listens: `start` builds it (the sidecar
 * calls it right after the handshake line), and a request that comes first waits for it. A
 * failed build answers the waiting requests `unavailable` and is tried again by the next one.
 */
export class DeferredHandler {
  private listener: RequestListener | undefined;
  private building: Promise<RequestListener> | undefined;

  constructor(
    private readonly build: () => Promise<RequestListener>,
    private readonly onBuildFailed: (reason: unknown) => void,
  ) {}

  readonly handle: RequestListener = (req, res) => {
    if (this.listener) return this.listener(req, res);
    this.start().then(
      (listener) => listener(req, res),
      () => answerUnavailable(res, "The sidecar could not start its services; see its log."),
    );
  };

  start(): Promise<RequestListener> {
    if (!this.building) {
      const attempt = this.build();
      this.building = attempt;
      attempt.then(
        (listener) => (this.listener = listener),
        (reason: unknown) => {
          if (this.building === attempt) this.building = undefined;
          this.onBuildFailed(reason);
        },
      );
    }
    return this.building;
  }
}
