import { AUTH_BASE_PATH } from "@app/contracts";
import { type Db, isDatabaseUnavailable, isInvalidInput } from "@app/db";
import { AppError, corsPolicy, errorHandler, notFoundHandler, RouteTable, requestLogging, securityHeaders } from "@app/http-kit";
import type { Mailer } from "@app/mailer";
import express, { type Express, type Request } from "express";
import type { Logger } from "pino";
import { adminRoutes } from "./admin/routes.js";
import type { IdentityConfig } from "./config.js";
import type { FeatureDeps } from "./features.js";
import { identityGuards } from "./middleware/guards.js";
import type { RateLimitRedis } from "./middleware/rate-limit-stores.js";
import { createRateLimits, markPasswordRejections, type RateLimits } from "./middleware/rate-limits.js";
import { limiterStores as createLimiterStores } from "./middleware/window-limits.js";
import { oauthProviderRoutes } from "./oauth-provider/routes.js";
import { OAuthStore } from "./oauth-provider/store.js";
import { OrganizationHousekeeping } from "./organizations/deletion.js";
import { organizationRoutes } from "./organizations/routes.js";
import { passkeyRoutes } from "./passkeys/routes.js";
import { passwordlessRoutes } from "./passwordless/routes.js";
import { accountRoutes } from "./routes/account-routes.js";
import { authRoutes } from "./routes/auth-routes.js";
import { healthRoutes } from "./routes/health.js";
import { mailedLinkRoutes } from "./routes/mailed-links.js";
import { openApiRoute } from "./routes/openapi.js";
import { socialRoutes } from "./routes/social-routes.js";
import { securityEventRoutes } from "./security-events/routes.js";
import { IdentityService } from "./services/identity.js";
import { createSocial } from "./services/oidc/index.js";
import { VerifiedSignUp } from "./services/verified-sign-up.js";
import { SignInFinisher } from "./sign-in/finish.js";
import { twoFactorParts, twoFactorRoutes } from "./two-factor/routes.js";
import { webhookRoutes } from "./webhooks/routes.js";

/** What the identity app is built from. */
export interface IdentityDeps {
  config: IdentityConfig;
  db: Db;
  logger: Logger;
  /** Clock for tests that freeze time (sessions, keys, in-memory rate limit counters). */
  now?: () => number;
  /** A Redis connection for the rate limit counters instead of one opened from the config (tests). */
  rateLimitRedis?: RateLimitRedis;
  /**
   * Outgoing mail (main.ts builds it from SMTP_URL and starts the outbox worker that sends with
   * it); without it mail answers 503 `mail_unavailable`.
   */
  mailer?: Mailer;
}

/** The built app and the service behind it (for tests and the server's housekeeping). */
export interface IdentityApp {
  app: Express;
  service: IdentityService;
  rateLimits: RateLimits;
  /** The organizations' share of the housekeeping rounds (main.ts hands it to startHousekeeping). */
  organizations: OrganizationHousekeeping;
  /** The authorization server's state, whose expired rows the housekeeping rounds purge. */
  oauth: Pick<OAuthStore, "purgeExpired">;
  /** Every route of the app, each with its guards in order (routes/*.ts); coverage() under tests. */
  routes: RouteTable;
  /** Releases what the app holds besides the database (the rate limit stores and their Redis connection). */
  close(): Promise<void>;
}

/** Maps dependency failures to coded errors: a database that cannot be reached answers 503. */
function classify(error: unknown): AppError | undefined {
  if (isDatabaseUnavailable(error)) return new AppError("service_unavailable", "database unavailable", { cause: error });
  if (isInvalidInput(error)) return new AppError("bad_request", "request contains a value that cannot be stored", { cause: error });
  return undefined;
}

const AUTH_PREFIX = `${AUTH_BASE_PATH}/`;

/**
 * Requests under the auth base path, as `app.use(AUTH_BASE_PATH)` matches them (case-insensitive,
 * whole segments): their error bodies also carry better-auth's top-level `code` and `message`,
 * which its client (`better-auth/client`, through better-fetch) reads from the body it hands to
 * its caller as `error` (packages/http-kit/src/envelope.ts).
 */
function underAuthBase(req: Request): boolean {
  const path = req.path.toLowerCase();
  return path === AUTH_BASE_PATH || path.startsWith(AUTH_PREFIX);
}

/**
 * Builds the identity Express app (never listens). Every route is declared once in a route table
 * with its guards in order (routes/*.ts, middleware/guards.ts: per-IP limits, body, per-account
 * limits, cookies, password queue, session, per-user limits). App-wide: request context and
 * logging, security headers; under the auth base path CORS (it answers preflights of any path);
 * then the routes (each starting with the origin check and no-store), 404, errors.
 */
export function createApp(deps: IdentityDeps): IdentityApp {
  const { config, db, logger } = deps;
  const service = new IdentityService({
    prisma: db.prisma,
    pool: db.pool,
    logger,
    settings: {
      authSecret: config.authSecret,
      issuer: config.issuer,
      audience: config.audience,
      jwtLifetimeSeconds: config.jwtLifetimeSeconds,
      sessionTtlMs: config.sessionTtlMs,
      maxSessionsPerUser: config.maxSessionsPerUser,
      keyActivationDelayMs: config.keyActivationDelayMs,
      baseUrl: config.baseUrl,
      trustedOrigins: config.corsOrigins,
      requireEmailVerification: config.requireEmailVerification,
      mailBudgetPerHour: config.mailBudgetPerHour,
    },
    ...(deps.now ? { now: deps.now } : {}),
    ...(deps.mailer ? { mailer: deps.mailer } : {}),
  });
  // One Redis connection (or none) for every limiter: sign-in's and the feature routes'.
  const limiterStores = createLimiterStores(config.rateLimits, {
    logger,
    ...(deps.now ? { now: deps.now } : {}),
    ...(deps.rateLimitRedis ? { redis: deps.rateLimitRedis } : {}),
  });
  const rateLimits = createRateLimits(config.rateLimits, {
    logger,
    ...(deps.now ? { now: deps.now } : {}),
    ...(limiterStores.redis ? { redis: limiterStores.redis } : {}),
    storeFailed: limiterStores.storeFailed,
    mail: config.mailRateLimits,
  });
  const cookie = { name: config.cookieName, secure: config.secureCookies };
  const guards = identityGuards(rateLimits, service.sessions, cookie, config.corsOrigins);
  // With verification required, sign-up answers new and taken addresses alike (docs/accounts.md).
  const verifiedSignUp = config.requireEmailVerification
    ? new VerifiedSignUp({ service, baseUrl: config.baseUrl, logger, ...(deps.now ? { now: deps.now } : {}) })
    : undefined;
  const social = createSocial({
    providers: config.socialProviders,
    prisma: db.prisma,
    sessions: service.sessions,
    settings: {
      authSecret: config.authSecret,
      baseUrl: config.baseUrl,
      trustedOrigins: config.corsOrigins,
      requireEmailVerification: config.requireEmailVerification,
    },
    logger,
  });
  const now = deps.now ?? Date.now;
  // The second factors' step first: every sign-in method ends through the finisher built with it.
  const twoFactor = twoFactorParts({ prisma: db.prisma, now, service, config, cookie });
  const features: FeatureDeps = {
    config,
    prisma: db.prisma,
    logger,
    now,
    service,
    guards,
    limiterStores,
    cookie,
    signIns: new SignInFinisher({ sessions: service.sessions, cookie, secondFactor: twoFactor.step }),
  };
  const oauthStore = new OAuthStore({ prisma: db.prisma, authSecret: config.authSecret });
  const routes = new RouteTable().add(
    ...healthRoutes(db),
    ...authRoutes(service, guards, cookie, features.signIns, verifiedSignUp),
    ...accountRoutes(service, guards, cookie, { deleteFreshAgeMs: config.factors.deleteFreshAgeMs }),
    ...mailedLinkRoutes(service, guards, cookie),
    ...socialRoutes(social, guards, cookie, features.signIns),
    ...twoFactorRoutes(features, twoFactor),
    ...passkeyRoutes(features),
    ...passwordlessRoutes(features),
    ...organizationRoutes(features),
    ...adminRoutes(features),
    ...oauthProviderRoutes(features, oauthStore),
    ...securityEventRoutes(features),
    ...webhookRoutes(features),
  );
  routes.add(openApiRoute(routes, { serverUrl: config.baseUrl, cookieName: config.cookieName }));

  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", config.trustProxy);
  app.use(requestLogging(logger));
  app.use(securityHeaders());
  // CORS answers preflights, which no route declares, and puts its headers on every answer under
  // the auth base path, errors and 404s included: it is the edge's, not a route's guard.
  app.use(AUTH_BASE_PATH, corsPolicy({ origins: config.corsOrigins, exposeAuthHeader: config.exposeAuthHeader }));
  app.use(routes.router());
  app.use(notFoundHandler());
  app.use(markPasswordRejections);
  app.use(errorHandler({ logger, classify, topLevelFields: underAuthBase }));
  const organizations = new OrganizationHousekeeping({ prisma: db.prisma, now });
  const close = async () => {
    await rateLimits.close();
    await limiterStores.close();
  };
  return { app, service, rateLimits, routes, organizations, oauth: oauthStore, close };
}
