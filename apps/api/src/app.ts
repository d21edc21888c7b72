import type { Server } from "node:http";
import { createVerifier, type Verifier } from "@app/auth-verify";
import { NEXT_CURSOR_HEADER } from "@app/contracts";
import type { Db } from "@app/db";
import { errorHandler, notFoundHandler, RouteTable, requestLogging, securityHeaders } from "@app/http-kit";
import { OutboundUrlPolicy, type ResolveAll } from "@app/http-kit/outbound";
import { SecretBox } from "@app/secret-box";
import express, { type Express } from "express";
import type { Logger } from "pino";
import { WebSocketServer } from "ws";
import { DeletedUsers } from "./account/deleted-users.js";
import { meRoutes } from "./account/me.js";
import { UserDeletions } from "./account/user-deletion.js";
import { RolesService } from "./admin/roles.js";
import { adminRoutes } from "./admin/routes.js";
import { classify } from "./classify.js";
import type { ApiConfig } from "./config.js";
import { createAuthenticate } from "./entry/authenticate.js";
import { bearer } from "./entry/bearer.js";
import { cookieSession } from "./entry/cookie-session.js";
import { apiCors } from "./entry/cors.js";
import { healthRoutes } from "./entry/health.js";
import { inOrder } from "./entry/in-order.js";
import { openApiRoute } from "./entry/openapi.js";
import { wsUpgradeHandler } from "./entry/ws-upgrade.js";
import { EventBus } from "./events/bus.js";
import { keySetPush } from "./events/key-set-push.js";
import { SseHub } from "./events/sse.js";
import { WsHub } from "./events/ws-hub.js";
import { generateRoutes } from "./generate/routes.js";
import { LocalTextProvider, OpenAiCompatibleProvider, type TextProvider } from "./generate/text-providers.js";
import { connectCapsRedis } from "./lib/caps-redis.js";
import { createExpiryScheduler, type ExpiryScheduler } from "./lib/expiry.js";
import { ResumeBudget } from "./lib/resume-budget.js";
import { UserCaps } from "./lib/user-caps.js";
import { McpOAuthService } from "./mcp/oauth.js";
import { nonceCookie } from "./mcp/oauth-nonce-cookie.js";
import { mcpOAuthRoutes } from "./mcp/oauth-routes.js";
import { mcpServerRoutes, mcpToolRoutes } from "./mcp/routes.js";
import { McpServersService } from "./mcp/servers.js";
import { McpToolsService } from "./mcp/tools.js";
import { createMcpServer } from "./mcp-server/server.js";
import { verifierObservers } from "./metrics.js";
import { type OrganizationDeletionDeps, OrganizationDeletions } from "./organizations/deletion.js";
import { Memberships } from "./organizations/membership.js";
import { Places } from "./organizations/places.js";
import { AgentsService } from "./resources/agents.js";
import { ChatsService } from "./resources/chats.js";
import { ProjectsService } from "./resources/projects.js";
import { agentRoutes, chatRoutes, projectRoutes } from "./resources/routes.js";
import { taskRoutes } from "./tasks/routes.js";
import { TasksService } from "./tasks/service.js";
import { FileStore, type SweepResult } from "./uploads/file-store.js";
import { uploadRoutes } from "./uploads/routes.js";
import { UploadsService } from "./uploads/service.js";
import { uploadSweep } from "./uploads/sweep.js";

/** What the API app is built from. */
export interface ApiDeps {
  config: ApiConfig;
  db: Db;
  logger: Logger;
  /** A verifier to use instead of one built from the config (tests). */
  verifier?: Verifier;
  /** Clock for the verifier and the OAuth state expiry (tests freeze it). */
  now?: () => number;
  /** fetch for outbound calls to operator-configured services: identity get-session, text provider. */
  fetch?: typeof fetch;
  /** DNS resolution of the outbound URL policy (tests map names to addresses). */
  resolveHost?: ResolveAll;
  /** Schedules the end of SSE streams and sockets at their token's expiry (tests fire it by hand). */
  expiry?: ExpiryScheduler;
  /** Text provider to use instead of the configured one. */
  textProvider?: TextProvider;
  /** Per-user caps to use instead of ones built from the config (tests). */
  caps?: UserCaps;
}

/** The built app and its lifecycle. */
export interface ApiApp {
  app: Express;
  verifier: Verifier;
  bus: EventBus;
  sse: SseHub;
  ws: WsHub;
  /** Per-user caps on concurrent streams, sockets and generations. */
  caps: UserCaps;
  /** Every route of the API, declared once (OpenAPI document, response checks and coverage under tests). */
  routes: RouteTable;
  /** Handles `GET /api/ws?token=` upgrades on an HTTP server. */
  attachWebSocket(server: Server): void;
  /** The MCP OAuth flow (its expired states are purged on a schedule). */
  oauth: McpOAuthService;
  /** Works off the user deletion outbox (account/user-deletion.ts). */
  deletions: UserDeletions;
  /** Works off the organization deletion outbox (organizations/deletion.ts). */
  organizationDeletions: OrganizationDeletions;
  /** Sweeps the upload directory now (at start and on every purge interval otherwise). */
  sweepUploads(): Promise<SweepResult | undefined>;
  /**
   * Starts event delivery (LISTEN), takes the upload directory (lease, sweep) and schedules the
   * OAuth state purge, the upload sweep and the organization deletion sweep.
   */
  start(): Promise<void>;
  /** Ends SSE streams and sockets with a reason and stops event delivery. */
  shutdown(reason?: string): Promise<void>;
  /** Once every connection has ended: deletes this instance's partial uploads and its lease. */
  close(): Promise<void>;
}

/**
 * The API's verifier as its configuration describes it (key set address, claims, cache, timings);
 * with METRICS_PORT set it reports outcomes and key set fetches to the metrics (metrics.ts).
 */
export function verifierFromConfig(config: ApiConfig, now?: () => number): Verifier {
  return createVerifier({
    ...(config.metrics.port === undefined ? {} : verifierObservers()),
    jwksUrl: config.jwksUrl,
    issuer: config.issuer,
    audience: config.audience,
    verifiedCache: config.verifyCache,
    ...(config.jwksStaleIfErrorMs === undefined ? {} : { staleIfErrorMs: config.jwksStaleIfErrorMs }),
    ...(config.jwksCacheMaxAgeMs === undefined ? {} : { cacheMaxAgeMs: config.jwksCacheMaxAgeMs }),
    ...(config.jwksCooldownMs === undefined ? {} : { cooldownMs: config.jwksCooldownMs }),
    ...(now ? { now } : {}),
  });
}

function textProviderFrom(config: ApiConfig, doFetch: typeof fetch | undefined): TextProvider {
  if (!config.openai) return new LocalTextProvider();
  return new OpenAiCompatibleProvider({ ...config.openai, ...(doFetch ? { fetch: doFetch } : {}) });
}

/**
 * Builds the API (never listens). Order: request context + logging, security headers, CORS on
 * /api, the route table (health and the OpenAPI document included; each route orders its own
 * guards: bearer, or the session cookie of the MCP authorize route, then role, body readers,
 * stream context), 404, errors. A body is read only by a guard placed after authentication.
 */
export function createApp(deps: ApiDeps): ApiApp {
  const { config, db, logger } = deps;
  const verifier = deps.verifier ?? verifierFromConfig(config, deps.now);
  const deleted = new DeletedUsers();
  const authenticate = createAuthenticate(verifier, deleted);
  const prisma = db.prisma;
  const push = keySetPush(verifier, logger);
  const store = new FileStore(config.uploadDir);
  const announceDeleted: OrganizationDeletionDeps["announceDeleted"] = (tx, gone) => bus.announceDeleted(tx, gone);
  const deletions = new UserDeletions(prisma, store, logger, deleted, announceDeleted);
  const organizationDeletions = new OrganizationDeletions({ prisma, store, logger, announceDeleted });
  const sweep = uploadSweep(store, prisma, logger);
  const bus = new EventBus({
    databaseUrl: config.databaseUrl,
    prisma,
    logger,
    heartbeatMs: config.eventBusHeartbeatMs,
    heartbeatTimeoutMs: config.eventBusHeartbeatTimeoutMs,
    channels: { ...push.channels, ...deletions.listener.channels, ...organizationDeletions.listener.channels },
    onReconnect: push.onReconnect,
    onListening: () => {
      deletions.listener.onListening();
      organizationDeletions.listener.onListening();
    },
  });
  const box = new SecretBox(config.dataEncryptionKey, "mcp-oauth-tokens");
  const memberships = new Memberships(prisma);
  const places = new Places(prisma, memberships);
  const tasks = new TasksService(prisma, bus, places, store);
  const roles = new RolesService(prisma);
  const policy = new OutboundUrlPolicy({
    allowPrivate: config.mcpAllowPrivateUrls,
    allowPrivateOrigins: config.mcpAllowPrivateOrigins,
    ...(deps.resolveHost ? { resolveAll: deps.resolveHost } : {}),
  });
  const mcpServers = new McpServersService(prisma, box, policy);
  const oauth = new McpOAuthService(prisma, mcpServers, box, {
    redirectUri: config.mcpRedirectUri,
    policy,
    logger,
    ...(deps.now ? { now: deps.now } : {}),
  });
  const expiry = deps.expiry ?? createExpiryScheduler(deps.now ? { now: deps.now } : {});
  // One budget for every catch-up of this instance, SSE and WebSocket alike (lib/resume-budget.ts).
  const resume = { budget: new ResumeBudget(config.resume.maxBytes), maxWaitMs: config.resume.maxWaitMs };
  const sse = new SseHub({ heartbeatMs: config.sseHeartbeatMs, maxBufferedBytes: config.sseMaxBufferedBytes, expiry, deleted });
  const ws = new WsHub({
    bus,
    tasks,
    logger,
    maxBufferedBytes: config.wsMaxBufferedBytes,
    maxResumeEvents: config.sseMaxResumeEvents,
    expiry,
    deleted,
    resume,
  });
  deleted.onDeleted((userId) => {
    sse.closeUser(userId);
    ws.closeUser(userId);
  });
  const capsRedis = deps.caps || !config.redisUrl ? undefined : connectCapsRedis(config.redisUrl, logger);
  const caps = deps.caps ?? new UserCaps({ limits: config.userCaps, redis: capsRedis, logger });
  const uploadLimits = { maxFileBytes: config.uploadMaxBytes, allowedTypes: config.uploadAllowedTypes };
  const maxPerOrganization = config.maxProjectsPerOrganization;
  const projects = new ProjectsService(prisma, { memberships, store, announceDeleted, maxPerOrganization });
  const chats = new ChatsService(prisma, places);
  // The API as an MCP server for agents (mcp-server/): the same services, the same rules.
  const services = { tasks, projects, chats, logger, classify };
  const mcpServer = createMcpServer({
    resource: config.mcpServer,
    verifier,
    deleted,
    caps,
    redis: capsRedis,
    tools: services,
    logger,
    now: deps.now,
  });

  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", config.trustProxy);
  const cors = apiCors({ origins: config.corsOrigins, exposeAuthHeader: config.exposeAuthHeader, expose: [NEXT_CURSOR_HEADER, "link"] });
  app.use(inOrder([...requestLogging(logger), securityHeaders(), cors]));

  const signedIn = bearer(authenticate);
  const maxResumeEvents = config.sseMaxResumeEvents;
  const session = cookieSession({ getSessionUrl: config.getSessionUrl, ...(deps.fetch ? { fetch: deps.fetch } : {}) });
  const tools = new McpToolsService(mcpServers, oauth, { ...config.mcpTools, resolve: (url) => policy.resolve(url), logger });
  const routes = new RouteTable().add(
    ...meRoutes(signedIn),
    ...taskRoutes(signedIn, { tasks, bus, sse, store, upload: uploadLimits, maxResumeEvents, logger, caps, resume }),
    ...projectRoutes(signedIn, projects),
    ...agentRoutes(signedIn, new AgentsService(prisma, places)),
    ...chatRoutes(signedIn, chats),
    ...mcpServerRoutes(signedIn, mcpServers),
    ...mcpToolRoutes(signedIn, tools),
    ...uploadRoutes(signedIn, { uploads: new UploadsService(prisma, store, memberships), limits: uploadLimits }),
    ...generateRoutes(signedIn, { provider: deps.textProvider ?? textProviderFrom(config, deps.fetch), sse, logger, caps }),
    ...mcpOAuthRoutes({ oauth, session, returnUrl: config.mcpReturnUrl, nonceCookie: nonceCookie(config.baseUrl), logger }),
    ...mcpServer.routes,
    ...adminRoutes(signedIn, roles),
    ...healthRoutes(db, bus),
  );
  routes.add(openApiRoute(routes, config.baseUrl));
  // A nested router answers OPTIONS without an Origin itself (200 with `Allow`), before the 404.
  app.use(routes.router());
  app.use(notFoundHandler());
  app.use(errorHandler({ logger, classify }));

  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  let purge: NodeJS.Timeout | undefined;
  const purgeStates = () =>
    oauth.purgeExpired().then(
      (n) => n && logger.info({ purged: n }, "expired OAuth states purged"),
      (err: Error) => logger.warn({ err: err.message }, "OAuth state purge failed; will retry"),
    );
  return {
    app,
    verifier,
    bus,
    sse,
    ws,
    caps,
    routes,
    oauth,
    deletions,
    organizationDeletions,
    sweepUploads: () => sweep("now"),
    attachWebSocket(server) {
      server.on("upgrade", (req, socket, head) => {
        // The socket cap is checked right after authentication and before the upgrade, so an
        // over-cap client gets an HTTP 429 with Retry-After; the slot is released when the
        // connection closes, whichever way (refused handshake, client gone, server close).
        const admitted = async (authorization: string | undefined) => {
          const auth = await authenticate(authorization);
          const lease = await caps.acquire("sockets", auth.userId);
          if (socket.destroyed) lease.release();
          else socket.once("close", () => lease.release());
          return auth;
        };
        wsUpgradeHandler({ authenticate: admitted, wss, logger, onConnection: (s, auth) => ws.accept(s, auth) })(req, socket, head);
      });
    },
    async start() {
      await store.init();
      await sweep("start");
      await bus.start();
      purge ??= setInterval(() => {
        void purgeStates();
        void sweep("interval");
        // Catches deletions whose notification no instance heard, and late rows (organizations/deletion.ts).
        void organizationDeletions.run("interval");
      }, config.purgeIntervalMs);
      purge.unref();
    },
    async shutdown(reason = "server shutting down") {
      clearInterval(purge);
      sse.closeAll(reason);
      ws.closeAll(reason);
      await deletions.close();
      await organizationDeletions.close();
      await bus.close();
      push.close();
      caps.close();
      await capsRedis?.close();
      mcpServer.close();
      verifier.close();
    },
    close: () => store.close(),
  };
}
