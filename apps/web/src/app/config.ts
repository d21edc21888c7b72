/** Run-time settings the web server writes into `/config.js` as `window.__CONFIG__`. */
export interface RuntimeConfig {
  apiBaseUrl?: string;
}

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
