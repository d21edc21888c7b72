import { randomUUID } from "node:crypto";
import { isSpanContextValid, trace } from "@opentelemetry/api";
import type { RequestHandler } from "express";
import { type DestinationStream, type Level, type Logger, pino } from "pino";
import { prettyFactory } from "pino-pretty";
import { currentContext, type RequestContext, runWithContext } from "./context.js";
import { redactUrl } from "./redact-url.js";

export { redactUrl };

/** A caller's `x-request-id` is kept only when it is this harmless. */
const REQUEST_ID = /^[\w.-]{1,64}$/;

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

/** Bytes of access lines buffered before one write(2) carries them to stdout. */
export const ACCESS_LOG_BUFFER_BYTES = 4096;
/** Longest time (ms) an access line waits in the buffer on a quiet service. */
export const ACCESS_LOG_FLUSH_MS = 250;

/** JSON lines for machines (production), or one human-readable line per record for a terminal. */
export type LogFormat = "json" | "pretty";

/**
 * `LOG_FORMAT=json|pretty` when set; otherwise pretty in development on a terminal
 * (`NODE_ENV` is not `production` and stdout is a TTY), JSON everywhere else.
 */
export function logFormat(env: NodeJS.ProcessEnv = process.env, isTTY = process.stdout.isTTY === true): LogFormat {
  const forced = env.LOG_FORMAT?.trim().toLowerCase();
  if (forced === "json" || forced === "pretty") return forced;
  if (forced) throw new Error(`LOG_FORMAT must be "json" or "pretty", got ${JSON.stringify(env.LOG_FORMAT)}`);
  return env.NODE_ENV !== "production" && isTTY ? "pretty" : "json";
}

/** {@link logFormat} of the process; an invalid `LOG_FORMAT` exits 78 like any invalid configuration (config.ts). */
function envLogFormat(name: string): LogFormat {
  try {
    return logFormat();
  } catch (error) {
    process.stderr.write(`${name}: invalid configuration\n  - LOG_FORMAT: ${(error as Error).message}\n`);
    process.exit(78);
  }
}

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  name: string;
  level?: string;
  /** Where lines go (default stdout); tests pass a stream to capture them (written synchronously). */
  destination?: DestinationStream;
  /** Default: {@link logFormat} of the process environment. */
  format?: LogFormat;
}

type Stdout = ReturnType<typeof pino.destination>;
let stdout: Stdout | undefined;

/**
 * The one writer of stdout shared by every logger of the process: buffered up to
 * {@link ACCESS_LOG_BUFFER_BYTES} (so one write(2) carries many access lines), flushed at least
 * every {@link ACCESS_LOG_FLUSH_MS} ms, and on process exit. Each write(2) is synchronous: an
 * asynchronous one still in the thread pool when the process exits can land after the lines
 * flushed at exit, or not at all (logger-stdout.test.ts), so shutdown lines would come out of
 * order. A stdout that cannot keep up slows the process down instead of growing the buffer.
 */
function stdoutWriter(): Stdout {
  if (stdout) return stdout;
  const writer = pino.destination({
    dest: 1,
    sync: true,
    minLength: ACCESS_LOG_BUFFER_BYTES,
    periodicFlush: ACCESS_LOG_FLUSH_MS,
  });
  // pino flushes only asynchronous destinations at exit by itself.
  process.on("exit", () => {
    try {
      writer.flushSync();
    } catch {
      // stdout is closed: nothing more can be written
    }
  });
  stdout = writer;
  return writer;
}

/**
 * Every line that is not an access line (listening, shutting down, warnings, errors) is pushed
 * out at once, behind whatever access lines are buffered: same order, nothing held back.
 */
function flushingEachLine(writer: Stdout): DestinationStream & { flush(cb?: (err?: Error) => void): void } {
  return {
    write(line: string) {
      writer.write(line);
      writer.flush();
    },
    flush(cb?: (err?: Error) => void) {
      writer.flush(cb);
    },
  };
}

/** Access lines read as `GET /api/x 200 3ms`; other records keep their message. */
function prettyMessage(log: Record<string, unknown>, messageKey: string): string {
  const req = log.req as { method?: string; url?: string } | undefined;
  const res = log.res as { statusCode?: number | null } | undefined;
  const msg = String(log[messageKey] ?? "");
  if (!req || !res) return msg;
  const access = `${req.method} ${req.url} ${res.statusCode ?? "-"} ${log.responseTime}ms`;
  return msg === "request completed" ? access : `${access} (${msg})`;
}

/**
 * Turns each JSON line (already censored by pino's redaction) into a readable line, synchronously,
 * before it reaches `target`: the same writer and flushing as the JSON format.
 */
function prettyLines(target: DestinationStream & { flush?: (cb?: (err?: Error) => void) => void }, colorize: boolean) {
  const pretty = prettyFactory({
    colorize,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname,reqId,req,res,responseTime",
    messageFormat: prettyMessage,
    singleLine: true,
  });
  return {
    write(line: string) {
      target.write(pretty(line));
    },
    flush(cb?: (err?: Error) => void) {
      if (target.flush) target.flush(cb);
      else cb?.();
    },
  };
}

/** The access-line logger that belongs to each logger made by {@link createLogger}. */
const accessLoggers = new WeakMap<Logger, Logger>();

/**
 * The service's pino logger: JSON lines, secrets censored, each line tagged with the current
 * request's `requestId` and verified `userId` (from the request context). Lines go to stdout
 * through one buffered asynchronous writer (see {@link ACCESS_LOG_BUFFER_BYTES}) unless a
 * `destination` is given; `logger.flush()` and process exit write out what is buffered.
 */
export function createLogger(options: LoggerOptions): Logger {
  const level = options.level ?? "info";
  const pretty = (options.format ?? envLogFormat(options.name)) === "pretty";
  const writer = options.destination === undefined ? stdoutWriter() : undefined;
  const mainOut = writer === undefined ? (options.destination as DestinationStream) : flushingEachLine(writer);
  const accessOut = writer ?? (options.destination as DestinationStream);
  const colorize = pretty && writer !== undefined && process.stdout.isTTY === true;
  const logger = pino(
    {
      name: options.name,
      level,
      redact: { paths: REDACT, censor: "[REDACTED]" },
      mixin() {
        const ctx = currentContext();
        return ctx ? (ctx.userId ? { requestId: ctx.requestId, userId: ctx.userId } : { requestId: ctx.requestId }) : {};
      },
    },
    pretty ? prettyLines(mainOut, colorize) : mainOut,
  );
  // Access lines carry only method, redacted URL, status, duration and ids, by construction
  // (see requestLogging): no redaction pass, no mixin, no child logger, buffered writes. Which
  // levels are written is still decided by `logger`.
  accessLoggers.set(logger, pino({ name: options.name, level: "trace" }, pretty ? prettyLines(accessOut, colorize) : accessOut));
  return logger;
}

/** Requests that arrive all the time and say nothing on success: CORS preflights and probes. */
function isRoutine(method: string, url: string): boolean {
  if (method === "OPTIONS") return true;
  // The path is the URL up to `?`, compared in place (no array per request).
  const end = url.indexOf("?");
  const path = end < 0 ? url.length : end;
  return (path === 8 && url.startsWith("/healthz")) || (path === 7 && url.startsWith("/readyz"));
}

/**
 * Level of an access line: error for 5xx and failed responses, warn for 4xx, debug for a
 * successful preflight or health check (so they do not flood the default level), info otherwise.
 */
function accessLevel(status: number, failed: boolean, routine: boolean): Level {
  return failed || status >= 500 ? "error" : status >= 400 ? "warn" : routine ? "debug" : "info";
}

/**
 * The trace id of the request's span when tracing is on (packages/telemetry: the HTTP
 * instrumentation makes the span active before any handler runs); undefined when it is off,
 * since without the SDK @opentelemetry/api has no context manager to hold a span.
 */
function activeTraceId(): string | undefined {
  const span = trace.getActiveSpan();
  if (!span) return undefined;
  const spanContext = span.spanContext();
  return isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}

/**
 * Opens a request context (request id from a trusted `x-request-id` or a new UUID) and logs one
 * line per response with method, redacted URL, status, duration, request id, user id and, when
 * tracing is on, the `trace_id` that finds the request's spans; no headers, no bodies. The line
 * has the shape pino-http gave it (`reqId`, `req`, `requestId`, `userId`, `res`, `responseTime`,
 * msg "request completed" / "request aborted") plus `trace_id`; failed responses
 * (5xx, or a response error) are logged as "request errored" with an `err` through `logger`
 * itself, with its redaction, and written out at once.
 */
export function requestLogging(logger: Logger): RequestHandler[] {
  const access = accessLoggers.get(logger) ?? logger;
  const handler: RequestHandler = (req, res, next) => {
    const incoming = req.headers["x-request-id"];
    const requestId = typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader("x-request-id", requestId);
    const context: RequestContext = { requestId };
    const traceId = activeTraceId();
    const started = Date.now();
    let logged = false;
    const complete = (error?: unknown): void => {
      if (logged) return;
      logged = true;
      const level = accessLevel(res.statusCode, error !== undefined, isRoutine(req.method, req.originalUrl || req.url));
      if (!logger.isLevelEnabled(level)) return;
      const line = {
        reqId: requestId,
        req: { method: req.method, url: redactUrl(req.originalUrl || req.url) },
        requestId,
        userId: context.userId,
        res: { statusCode: res.headersSent ? res.statusCode : null },
        responseTime: Date.now() - started,
        ...(traceId === undefined ? {} : { trace_id: traceId }),
      };
      if (error !== undefined || res.statusCode >= 500) {
        const err = error ?? new Error(`failed with status code ${res.statusCode}`);
        logger[level]({ ...line, err }, "request errored");
        return;
      }
      access[level](line, !req.readableAborted && res.writableEnded ? "request completed" : "request aborted");
    };
    res.on("finish", complete);
    res.on("close", complete);
    res.on("error", complete);
    runWithContext(context, next);
  };
  return [handler];
}
