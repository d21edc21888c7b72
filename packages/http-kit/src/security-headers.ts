import type { Request, RequestHandler, Response } from "express";
import helmet from "helmet";

/** Options of {@link securityHeaders}. */
export interface SecurityHeadersOptions {
  /**
   * `Cross-Origin-Resource-Policy` (default `same-site`). CORS requests of the web client are not
   * affected by it; it only stops other sites embedding responses with no-cors loads.
   */
  crossOriginResourcePolicy?: "same-origin" | "same-site" | "cross-origin";
}

/** What a header middleware did to a response: headers set (last value wins) and headers removed. */
export interface RecordedHeaders {
  readonly set: ReadonlyArray<readonly [name: string, value: string]>;
  readonly removed: readonly string[];
}

/** The helmet policy of {@link securityHeaders}. */
export function helmetPolicy(options: SecurityHeadersOptions = {}): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        "default-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'none'"],
        "frame-ancestors": ["'none'"],
      },
    },
    crossOriginResourcePolicy: { policy: options.crossOriginResourcePolicy ?? "same-site" },
    referrerPolicy: { policy: "no-referrer" },
    frameguard: { action: "deny" },
  }) as RequestHandler;
}

/**
 * Runs a header middleware that does not depend on the request (helmet with static directives)
 * once against a recording response and returns what it set and removed.
 * @throws Error if the middleware fails, reads the request, or does not call `next` synchronously.
 */
export function recordHeaders(middleware: RequestHandler): RecordedHeaders {
  const set = new Map<string, readonly [string, string]>();
  const removed: string[] = [];
  const res = {
    setHeader(name: string, value: unknown) {
      set.set(name.toLowerCase(), [name, String(value)]);
      return res;
    },
    removeHeader(name: string) {
      set.delete(name.toLowerCase());
      removed.push(name);
    },
  };
  const req = new Proxy(
    {},
    {
      get(_target, property) {
        throw new Error(`the header middleware reads the request (${String(property)}); it cannot be recorded`);
      },
    },
  );
  let done = false;
  void middleware(req as Request, res as unknown as Response, (error?: unknown) => {
    if (error !== undefined) throw error;
    done = true;
  });
  if (!done) throw new Error("the header middleware did not finish synchronously; it cannot be recorded");
  return { set: [...set.values()], removed };
}

/**
 * helmet with a policy for services that answer JSON, SSE streams and files, never HTML: a
 * content security policy that allows nothing (`default-src 'none'`, no framing, no forms, no
 * base URI), `Referrer-Policy: no-referrer`, `X-Content-Type-Options: nosniff`, frame denial,
 * HSTS, and helmet's other defaults. A route may still set a stricter header of its own.
 *
 * The policy is static, so helmet runs once at start-up and each response gets the recorded
 * headers in one middleware (helmet itself walks a chain of twelve per request).
 */
export function securityHeaders(options: SecurityHeadersOptions = {}): RequestHandler {
  const { set, removed } = recordHeaders(helmetPolicy(options));
  return (_req, res, next) => {
    for (const name of removed) res.removeHeader(name);
    for (const [name, value] of set) res.setHeader(name, value);
    next();
  };
}
