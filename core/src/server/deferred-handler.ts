import type * as http from "node:http";
import type * as net from "node:net";
import { readBody } from "./read-body.js";
import { answerUnavailable } from "./unavailable.js";

/** A request listener that may be given the request's body already read. */
export type RequestListener = (req: http.IncomingMessage, res: http.ServerResponse, body?: Uint8Array) => void;

/** What a call is judged on before its body is read: node:http's request, or the front's (early-front.ts). */
export interface CallHead {
  method?: string;
  url?: string;
  headers: http.IncomingHttpHeaders;
  socket: net.Socket;
}

/** An answer given without the request listener: HTTP 200 with this body. */
export interface EarlyAnswer {
  contentType: string;
  body: Uint8Array;
}

/** Calls answered without the request listener, until it is built (see DeferredHandler). */
export interface EarlyAnswers {
  /** Whether it may answer this request, from its method, path and headers alone. */
  takes(head: CallHead): boolean;
  /**
   * The answer to a call whose whole body was read; undefined when it leaves the call
   * (unanswered) to the listener, which is then built if it is not yet and given the body.
   */
  answer(head: CallHead, body: Uint8Array): Promise<EarlyAnswer | undefined>;
}

export interface EarlyOptions {
  answers: EarlyAnswers;
  /** A body past this is left to the listener (it answers resource_exhausted). */
  readMaxBytes: number;
}

/**
 * A request listener that is built after the server listens, with `start` or with the first
 * request that needs it, which waits for it. Until it is built, the calls `early` takes are
 * answered without it: a sidecar that was only started and initialized never loads connect. A
 * failed build answers the waiting requests `unavailable` and is tried again by the next one.
 */
export class DeferredHandler {
  private listener: RequestListener | undefined;
  private building: Promise<RequestListener> | undefined;

  constructor(
    private readonly build: () => Promise<RequestListener>,
    private readonly onBuildFailed: (reason: unknown) => void,
    private readonly early?: EarlyOptions,
  ) {}

  readonly handle: RequestListener = (req, res) => {
    if (this.listener) return this.listener(req, res);
    if (this.early?.answers.takes(req)) return this.answerEarly(req, res, this.early);
    this.whenBuilt(req, res);
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

  private whenBuilt(req: http.IncomingMessage, res: http.ServerResponse, body?: Uint8Array): void {
    this.start().then(
      (listener) => listener(req, res, body),
      () => answerUnavailable(res, "The sidecar could not start its services; see its log."),
    );
  }

  private answerEarly(req: http.IncomingMessage, res: http.ServerResponse, early: EarlyOptions): void {
    readBody(req, early.readMaxBytes)
      .then(async (body) => {
        const answer = body.byteLength <= early.readMaxBytes ? await early.answers.answer(req, body) : undefined;
        if (!answer) {
          this.whenBuilt(req, res, body);
          return;
        }
        if (!res.destroyed) {
          res
            .writeHead(200, { "content-type": answer.contentType, "content-length": String(answer.body.byteLength) })
            .end(answer.body);
        }
      })
      .catch(() => res.destroy());
  }
}
