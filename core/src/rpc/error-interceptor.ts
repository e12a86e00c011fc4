import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
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
    // An answer that says "see its log" must find something there: every error answered
    // internal is logged, an unmapped errno or SQLite code too (the code and the stack).
    if (!(err instanceof ConnectError) && mapped.code === Code.Internal) {
      const code = (err as { code?: unknown } | null)?.code;
      logger.error("handler failed", {
        method,
        ...(typeof code === "string" ? { code } : {}),
        error: (err as Error)?.stack ?? String(err),
      });
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
