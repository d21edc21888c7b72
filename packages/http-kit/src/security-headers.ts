import type { RequestHandler } from "express";
import helmet from "helmet";

/** Options of {@link securityHeaders}. */
export interface SecurityHeadersOptions {
  /**
   * `Cross-Origin-Resource-Policy` (default `same-site`). CORS requests of the web client are not
   * affected by it; it only stops other sites embedding responses with no-cors loads.
   */
  crossOriginResourcePolicy?: "same-origin" | "same-site" | "cross-origin";
}

/**
 * helmet with a policy for services that answer JSON, SSE streams and files, never HTML: a
 * content security policy that allows nothing (`default-src 'none'`, no framing, no forms, no
 * base URI), `Referrer-Policy: no-referrer`, `X-Content-Type-Options: nosniff`, frame denial,
 * HSTS, and helmet's other defaults. A route may still set a stricter header of its own.
 */
export function securityHeaders(options: SecurityHeadersOptions = {}): RequestHandler {
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
