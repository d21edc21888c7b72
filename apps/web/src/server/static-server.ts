import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import path from "node:path";
import { AppError, writeError } from "@app/http-kit";

/** Options of {@link createStaticServer}. */
export interface StaticServerOptions {
  /** The built app (vite's output directory). */
  root: string;
  /** The service base URL the app calls, written into `/config.js`. */
  apiBaseUrl: string;
  /** Seconds between the app's session checks (`SESSION_RECHECK_SECONDS`), written into `/config.js`. */
  sessionRecheckSeconds?: number;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
  ".woff2": "font/woff2",
};

/**
 * Security headers of every answer. The page may only run its own scripts and talk to itself
 * and to the service (HTTP and WebSocket origins of `apiBaseUrl`).
 */
export function securityHeaders(apiBaseUrl: string): Record<string, string> {
  const api = new URL(apiBaseUrl);
  const ws = `${api.protocol === "https:" ? "wss:" : "ws:"}//${api.host}`;
  return {
    "content-security-policy": [
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self'",
      "img-src 'self' data: blob:",
      `connect-src 'self' ${api.origin} ${ws}`,
      "object-src 'none'",
      "base-uri 'self'",
      "form-action 'self'",
      "frame-ancestors 'none'",
    ].join("; "),
    "x-content-type-options": "nosniff",
    "referrer-policy": "strict-origin-when-cross-origin",
    "x-frame-options": "DENY",
  };
}

/**
 * The `/config.js` body: `window.__CONFIG__` with the service base URL and, when set, the seconds
 * between session checks (apps/web/src/app/config.ts reads both; JSON, so no injection).
 */
export function configScript(apiBaseUrl: string, sessionRecheckSeconds?: number): string {
  const json = JSON.stringify({ apiBaseUrl, ...(sessionRecheckSeconds === undefined ? {} : { sessionRecheckSeconds }) }).replace(
    /</g,
    "\\u003c",
  );
  return `window.__CONFIG__ = ${json};\n`;
}

const NOT_BUILT = new AppError("service_unavailable", "the web app is not built: run pnpm build", { expose: true });

/** Maps a URL path to a file under `root`, or undefined when it would leave it or is malformed. */
export function resolveFile(root: string, urlPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (decoded.includes("\0") || decoded.includes("\\")) return undefined;
  const file = path.resolve(root, `.${path.posix.normalize(`/${decoded}`)}`);
  return file === root || file.startsWith(`${root}${path.sep}`) ? file : undefined;
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

function send(res: ServerResponse, status: number, type: string, body: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": type, "content-length": String(Buffer.byteLength(body)), ...extra });
  res.end(res.req.method === "HEAD" ? undefined : body);
}

/**
 * The request handler of the web app's own origin (serve.ts listens with it): serves the built files (hashed `/assets/*` cached for a year,
 * everything else revalidated), answers `/config.js` with the run-time settings and
 * `/healthz`, and falls back to `index.html` for extension-less paths. GET and HEAD only.
 */
export function staticHandler(options: StaticServerOptions): http.RequestListener {
  const root = path.resolve(options.root);
  const headers = securityHeaders(options.apiBaseUrl);
  const config = configScript(options.apiBaseUrl, options.sessionRecheckSeconds);
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (req.method !== "GET" && req.method !== "HEAD")
      return writeError(res, new AppError("method_not_allowed", "method not allowed", { headers: { allow: "GET, HEAD" } }));
    const urlPath = new URL(req.url ?? "/", "http://web.invalid").pathname;
    // `instance`: the launcher's per-launch nonce (tools/stack/src/processes.ts), when it set one.
    if (urlPath === "/healthz")
      return send(res, 200, "application/json", JSON.stringify({ status: "ok", instance: process.env.STACK_INSTANCE_ID }));
    if (urlPath === "/config.js") return send(res, 200, TYPES[".js"] ?? "", config, { "cache-control": "no-store" });
    let file = resolveFile(root, urlPath === "/" ? "/index.html" : urlPath);
    if (!file) return writeError(res, new AppError("bad_request", "bad path"));
    if (!(await isFile(file))) {
      if (path.extname(urlPath)) return writeError(res, new AppError("not_found", "not found"));
      file = path.join(root, "index.html");
      if (!(await isFile(file))) return writeError(res, NOT_BUILT);
    }
    const info = await stat(file);
    res.writeHead(200, {
      "content-type": TYPES[path.extname(file)] ?? "application/octet-stream",
      "content-length": String(info.size),
      "cache-control": urlPath.startsWith("/assets/") ? "public, max-age=31536000, immutable" : "no-cache",
    });
    if (req.method === "HEAD") return void res.end();
    createReadStream(file)
      .on("error", () => res.destroy())
      .pipe(res);
  };
  return (req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) writeError(res, new AppError("internal_error", "internal error", { cause: error }));
      else res.destroy();
    });
  };
}

/** A server of {@link staticHandler} without limits, for tests. */
export function createStaticServer(options: StaticServerOptions): http.Server {
  return http.createServer(staticHandler(options));
}
