/** Run-time settings the web server writes into `/config.js` as `window.__CONFIG__`. */
export interface RuntimeConfig {
  apiBaseUrl?: string;
  /** `SESSION_RECHECK_SECONDS` of the web server: how often the app asks whether its session still holds. */
  sessionRecheckSeconds?: number;
}

/** How often the app checks its session when the server says nothing (`SESSION_RECHECK_SECONDS`' default). */
export const DEFAULT_SESSION_RECHECK_SECONDS = 60;
/** The bounds the web server enforces too (apps/web/src/server/serve.ts). */
export const SESSION_RECHECK_BOUNDS = { min: 1, max: 3600 } as const;

/** Where the service is when neither the server nor the build says otherwise. */
export const DEFAULT_API_BASE_URL = "http://localhost:3000";

function httpUrl(value: unknown): string | undefined {
  if (typeof value !== "string" || !value.trim()) return undefined;
  try {
    const url = new URL(value.trim());
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
    return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
  } catch {
    return undefined;
  }
}

/**
 * The service base URL: the run-time config written by the web server (so one build can point
 * at any stack), else `VITE_API_BASE_URL` baked in at build time, else http://localhost:3000.
 * Values that are not absolute http(s) URLs are ignored.
 */
export function resolveApiBaseUrl(runtime: unknown, buildTime: string | undefined): string {
  const fromRuntime = typeof runtime === "object" && runtime !== null ? httpUrl((runtime as RuntimeConfig).apiBaseUrl) : undefined;
  return fromRuntime ?? httpUrl(buildTime) ?? DEFAULT_API_BASE_URL;
}

/**
 * Seconds between session checks: the run-time config's whole number within
 * {@link SESSION_RECHECK_BOUNDS}, else {@link DEFAULT_SESSION_RECHECK_SECONDS}.
 */
export function resolveSessionRecheckSeconds(runtime: unknown): number {
  const value = typeof runtime === "object" && runtime !== null ? (runtime as RuntimeConfig).sessionRecheckSeconds : undefined;
  return typeof value === "number" && Number.isInteger(value) && value >= SESSION_RECHECK_BOUNDS.min && value <= SESSION_RECHECK_BOUNDS.max
    ? value
    : DEFAULT_SESSION_RECHECK_SECONDS;
}
