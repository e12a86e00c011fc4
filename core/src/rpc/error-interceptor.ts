import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { toConnectError } from "./connect-errors.js";
import type { Logger } from "../logging/logger.js";

/**
 * Turns domain errors into Connect errors, for unary answers and for errors raised while a
 * stream is being produced. Errors that are not ours are logged with their details here and
 * answered with a generic sentence (their text may hold paths or values).
 */
export function errorInterceptor(logger: Logger): Interceptor {
  const convert = (err: unknown, method: string): ConnectError => {
    const mapped = toConnectError(err);
    if (!(err instanceof ConnectError) && mapped.code !== undefined && !(err as { code?: unknown })?.code) {
      logger.error("handler failed", { method, error: (err as Error)?.stack ?? String(err) });
    }
    return mapped;
  };
  return (next) => async (req) => {
    const method = req.method.name;
    let res;
    try {
      res = await next(req);
    } catch (err) {
      throw convert(err, method);
    }
    if (!res.stream) return res;
    const source = res.message;
    return {
      ...res,
      message: (async function* () {
        try {
          yield* source;
        } catch (err) {
          throw convert(err, method);
        }
      })(),
    };
  };
}
