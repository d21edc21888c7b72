import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { AUTH_BASE_PATH } from "@app/contracts";
import {
  AppError,
  createLimitedServer,
  EDGE_LIMITS,
  isRefusedConnection,
  redactUrl,
  type ServerLimits,
  writeError,
  writeUpgradeError,
} from "@app/http-kit";
import { createProxyMiddleware, type RequestHandler } from "http-proxy-middleware";
import type { Logger } from "pino";
import { devMailHostAllowed } from "./dev-mail-host.js";
import { clientConnection, LINGER_LIMITS, type LingerLimits, lingerAfterResponse } from "./early-answer.js";

/** Where the gateway sends traffic: one or more base URLs per upstream, used round robin. */
export interface GatewayOptions {
  identity: readonly string[];
  api: readonly string[];
  logger: Logger;
  /** Connection caps and timeouts (default {@link EDGE_LIMITS}); docs/edge-limits.md. */
  limits?: ServerLimits;
  /**
   * The development mailbox (tools/stack/src/dev-mail.ts) served at `/dev/mail`; only set by
   * {@link devMailUpstream}, so the route does not exist in production.
   */
  devMail?: string | undefined;
  /** The public base URL (`BASE_URL`): besides loopback names, the one Host `/dev/mail` answers. */
  baseUrl?: string | undefined;
  /** What is still read of a request body after its response (default {@link LINGER_LIMITS}). */
  linger?: LingerLimits;
}

/**
 * Where `/dev/mail` goes: `DEV_MAIL_URL`, only outside production. In production the route is never
 * mounted, whatever DEV_MAIL_URL says, so a stray variable cannot expose anyone's mail.
 */
export function devMailUpstream(env: { NODE_ENV?: string | undefined; DEV_MAIL_URL?: string | undefined }): string | undefined {
  return env.NODE_ENV !== "production" && env.DEV_MAIL_URL ? env.DEV_MAIL_URL : undefined;
}

function isDevMailPath(url: string): boolean {
  const path = url.split("?")[0] ?? "/";
  return path === "/dev/mail" || path.startsWith("/dev/mail/");
}

function roundRobin(targets: readonly string[]): () => string {
  if (!targets.length) throw new Error("gateway needs at least one upstream per route");
  let next = 0;
  return () => {
    const target = targets[next % targets.length] as string;
    next += 1;
    return target;
  };
}

/**
 * Paths whose meaning could differ between this router and the upstream (empty, dot or
 * backslash segments, encoded slashes or dots) are refused instead of being normalised later.
 */
export function isAmbiguousPath(url: string | undefined): boolean {
  const path = (url ?? "/").split("?")[0] ?? "/";
  if (!path.startsWith("/") || path.includes("\\") || path.includes("//")) return true;
  if (/%(2e|2f|5c|00)/i.test(path)) return true;
  return path.split("/").some((segment) => segment === "." || segment === "..");
}

/** Client-supplied forwarding headers: the gateway is the edge, so it sets them itself. */
const FORWARDING_HEADERS = ["x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-forwarded-port", "forwarded", "x-real-ip"];

function dropForwardingHeaders(req: IncomingMessage): void {
  for (const name of FORWARDING_HEADERS) delete req.headers[name];
}

/** True when the request carries more than one Authorization header (Node keeps only the first). */
function repeatsAuthorization(req: IncomingMessage): boolean {
  let seen = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]?.toLowerCase() === "authorization") seen += 1;
  return seen > 1;
}

function isApiPath(url: string): boolean {
  return url === "/api" || url.startsWith("/api/") || url.startsWith("/api?");
}

function isAuthPath(url: string | undefined): boolean {
  const path = (url ?? "/").split("?")[0] ?? "/";
  return path === AUTH_BASE_PATH || path.startsWith(`${AUTH_BASE_PATH}/`);
}

/**
 * The discovery documents of the authorization server (RFC 8414, OpenID Connect Discovery) are
 * identity's; the protected resource metadata of `/api/mcp` (RFC 9728) is the API's. Both live at
 * the root, as those specifications place them.
 */
const WELL_KNOWN_IDENTITY = ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"];
const WELL_KNOWN_API = ["/.well-known/oauth-protected-resource"];

function underOneOf(url: string | undefined, prefixes: readonly string[]): boolean {
  const path = (url ?? "/").split("?")[0] ?? "/";
  return prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

function notFound(req: IncomingMessage, url: string): AppError {
  return new AppError("not_found", `no route for ${req.method} ${url.split("?")[0]}`);
}

function unavailable(res: ServerResponse | Socket, logger: Logger, error: Error, req: IncomingMessage): void {
  // An upstream that answered before reading the whole body closes its side; the error that
  // follows (EPIPE while forwarding the rest) concerns a request already answered in full.
  if ("writeHead" in res && res.writableFinished) return;
  logger.warn({ err: error.message, url: redactUrl(req.url) }, "upstream unreachable");
  if ("writeHead" in res) {
    if (!res.headersSent) writeError(res, new AppError("service_unavailable", "upstream service unavailable", { expose: true }));
    else res.destroy();
  } else res.destroy();
}

/**
 * The local gateway behind `pnpm start`: one base URL, `/api/auth/*` to the identity process,
 * every other `/api/*` path (WebSocket upgrades and SSE included, unbuffered) to the API process.
 * Containers use a real reverse proxy with the same routing (docker/).
 */
export function createGateway(options: GatewayOptions): Server {
  const { logger } = options;
  const linger = options.linger ?? LINGER_LIMITS;
  const pickIdentity = roundRobin(options.identity);
  const pickApi = roundRobin(options.api);
  const common = {
    changeOrigin: false,
    xfwd: true,
    ws: false, // upgrades are routed by hand below; true would let each proxy grab every upgrade
    proxyTimeout: 0,
    on: {
      error: (err: Error, req: IncomingMessage, res: ServerResponse | Socket) => unavailable(res, logger, err, req),
      proxyRes: (proxyRes: IncomingMessage, req: IncomingMessage) => clientConnection(proxyRes, req, linger),
    },
  };
  const identity: RequestHandler = createProxyMiddleware({ ...common, target: options.identity[0], router: () => pickIdentity() });
  const api: RequestHandler = createProxyMiddleware({ ...common, target: options.api[0], router: () => pickApi() });
  // changeOrigin: the mailbox sees its own loopback address as Host, the only one it answers.
  const devMail: RequestHandler | undefined = options.devMail
    ? createProxyMiddleware({ ...common, changeOrigin: true, target: options.devMail })
    : undefined;

  // Request heads up to 128 KiB (Node's default is 16 KiB), as the API accepts: an oversized token
  // then reaches the API's verifier and gets its 401 envelope instead of a bare 431 here.
  // Short head and request timeouts and per-address and total connection caps: this is the edge,
  // where half-sent requests from one address must not hold every file descriptor.
  const limits = options.limits ?? EDGE_LIMITS;
  const server = createLimitedServer(
    (req, res) => {
      if (isRefusedConnection(req.socket)) return; // already answered 503 and closing
      const url = req.url ?? "/";
      if (url === "/healthz" || url.startsWith("/healthz?")) {
        // `instance`: the launcher's per-launch nonce (tools/stack/src/processes.ts), when it set one.
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ status: "ok", instance: process.env.STACK_INSTANCE_ID }));
        return;
      }
      if (isAmbiguousPath(url))
        return writeError(res, new AppError("bad_request", "path contains empty, dot or encoded separator segments"));
      if (repeatsAuthorization(req)) {
        // The proxy would forward only the first one; the API refuses such requests, so refuse here.
        const headers = { "www-authenticate": 'Bearer error="invalid_token"' };
        return writeError(res, new AppError("malformed_token", "more than one Authorization header", { headers }));
      }
      dropForwardingHeaders(req);
      const mailbox = devMail && (req.method === "GET" || req.method === "HEAD") && isDevMailPath(url) ? devMail : undefined;
      if (mailbox && !devMailHostAllowed(req.headers.host, options.baseUrl)) {
        return writeError(res, new AppError("forbidden", "the development mailbox answers only on the base URL's host or localhost"));
      }
      const toIdentity = isAuthPath(url) || underOneOf(url, WELL_KNOWN_IDENTITY);
      const toApi = isApiPath(url) || underOneOf(url, WELL_KNOWN_API);
      const route = toIdentity ? identity : toApi ? api : mailbox;
      if (!route) return writeError(res, notFound(req, url));
      lingerAfterResponse(req, res, linger);
      void route(req, res, (error?: unknown) => {
        if (error) unavailable(res, logger, error as Error, req);
      });
    },
    limits,
    { maxHeaderSize: 128 * 1024, logger },
  );
  server.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    if (isRefusedConnection(socket)) return;
    const url = req.url ?? "/";
    if (isAmbiguousPath(url) || !isApiPath(url)) return writeUpgradeError(socket, notFound(req, url));
    dropForwardingHeaders(req);
    const route = isAuthPath(url) ? identity : api;
    route.upgrade?.(req, socket, head);
  });
  return server;
}
