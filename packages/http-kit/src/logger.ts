import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestHandler } from "express";
import { type DestinationStream, type Logger, pino } from "pino";
import { pinoHttp } from "pino-http";
import { currentContext, runWithContext } from "./context.js";

/** Query parameters whose values never reach a log line. */
const SECRET_PARAMS = /([?&](?:token|access_token|code|code_verifier|state|password|secret)=)[^&#]*/gi;

/** Strips secret-bearing query parameters (the WebSocket `token`, OAuth codes) from a URL. */
export function redactUrl(url: string | undefined): string | undefined {
  return url?.replace(SECRET_PARAMS, "$1[REDACTED]");
}

/** Paths pino censors in every record, wherever a caller logs a request, headers or a body. */
const REDACT = [
  "password",
  "*.password",
  "token",
  "*.token",
  "secret",
  "*.secret",
  "authorization",
  "cookie",
  "req.headers.authorization",
  "req.headers.cookie",
  "res.headers['set-cookie']",
  "res.headers['set-auth-jwt']",
  "headers.authorization",
  "headers.cookie",
  "*.headers.authorization",
  "*.headers.cookie",
];

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  name: string;
  level?: string;
  /** Where lines go (default stdout); tests pass a stream to capture them. */
  destination?: DestinationStream;
}

/**
 * The service's pino logger: JSON lines, secrets censored, each line tagged with the current
 * request's `requestId` and verified `userId` (from the request context).
 */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      name: options.name,
      level: options.level ?? "info",
      redact: { paths: REDACT, censor: "[REDACTED]" },
      mixin() {
        const ctx = currentContext();
        return ctx ? (ctx.userId ? { requestId: ctx.requestId, userId: ctx.userId } : { requestId: ctx.requestId }) : {};
      },
    },
    options.destination,
  );
}

/**
 * Opens a request context (request id from a trusted `x-request-id` or a new UUID) and logs one
 * line per response with method, redacted URL, status and duration; no headers, no bodies.
 */
export function requestLogging(logger: Logger): RequestHandler[] {
  const http = pinoHttp({
    logger,
    genReqId: (_req: IncomingMessage) => currentContext()?.requestId ?? randomUUID(),
    quietReqLogger: true,
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? "error" : res.statusCode >= 400 ? "warn" : "info"),
    serializers: {
      req: (req: { method?: string; url?: string }) => ({ method: req.method, url: redactUrl(req.url) }),
      res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
    },
    customSuccessObject: (_req: IncomingMessage, _res: ServerResponse, val: Record<string, unknown>) => ({
      ...val,
      userId: currentContext()?.userId,
    }),
    customErrorObject: (_req: IncomingMessage, _res: ServerResponse, _err: Error, val: Record<string, unknown>) => ({
      ...val,
      userId: currentContext()?.userId,
    }),
  });
  const context: RequestHandler = (req, res, next) => {
    const incoming = req.headers["x-request-id"];
    const requestId = typeof incoming === "string" && /^[\w.-]{1,64}$/.test(incoming) ? incoming : randomUUID();
    res.setHeader("x-request-id", requestId);
    runWithContext({ requestId }, () => next());
  };
  return [context, http as unknown as RequestHandler];
}
