/**
 * BENCH-ONLY COPY of the access logging the product had before (not used by the product), so the
 * reference server can measure it beside the current one in the same run: a pino logger with the
 * redaction paths and the context mixin writing synchronously to stdout (one write(2) per line),
 * and pino-http with two child loggers per request, the standard request serializer wrapped by
 * ours, and the redaction pass on every access line.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { currentContext, redactUrl, runWithContext } from "@app/http-kit";
import type { RequestHandler } from "express";
import { type Logger, pino } from "pino";
import { pinoHttp } from "pino-http";

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

/** The previous `createLogger` with its default destination (pino's synchronous stdout). */
export function createLegacyLogger(name: string, level: string): Logger {
  return pino({
    name,
    level,
    redact: { paths: REDACT, censor: "[REDACTED]" },
    mixin() {
      const ctx = currentContext();
      return ctx ? (ctx.userId ? { requestId: ctx.requestId, userId: ctx.userId } : { requestId: ctx.requestId }) : {};
    },
  });
}

/** The previous `requestLogging`: request context, then pino-http. */
export function legacyRequestLogging(logger: Logger): RequestHandler[] {
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
