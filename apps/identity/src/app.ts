import { type Db, isDatabaseUnavailable, isInvalidInput } from "@app/db";
import { AppError, corsPolicy, errorHandler, jsonBody, notFoundHandler, requestLogging, securityHeaders } from "@app/http-kit";
import type { Mailer } from "@app/mailer";
import cookieParser from "cookie-parser";
import express, { type Express } from "express";
import type { Logger } from "pino";
import type { IdentityConfig } from "./config.js";
import { betterAuthErrorFields } from "./middleware/better-auth-errors.js";
import { originCheck } from "./middleware/origin-check.js";
import type { RateLimitRedis } from "./middleware/rate-limit-stores.js";
import { clientKey, createRateLimits, markPasswordRejections, type RateLimits } from "./middleware/rate-limits.js";
import { resolveSession } from "./middleware/session-cookie.js";
import { accountRoutes } from "./routes/account-routes.js";
import { authRoutes } from "./routes/auth-routes.js";
import { healthRoutes } from "./routes/health.js";
import { socialRoutes } from "./routes/social-routes.js";
import { IdentityService } from "./services/identity.js";
import { createSocial } from "./services/oidc/index.js";
import { passwordQueue } from "./services/password-queue.js";
import { VerifiedSignUp } from "./services/verified-sign-up.js";

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
   * Outgoing mail (server.ts builds it from SMTP_URL and starts the outbox worker that sends with
   * it); without it mail answers 503 `mail_unavailable`.
   */
  mailer?: Mailer;
}

/** The built app and the service behind it (for tests and the server's housekeeping). */
export interface IdentityApp {
  app: Express;
  service: IdentityService;
  rateLimits: RateLimits;
  /** Releases what the app holds besides the database (the rate limit store). */
  close(): Promise<void>;
}

/** Maps dependency failures to coded errors: a database that cannot be reached answers 503. */
function classify(error: unknown): AppError | undefined {
  if (isDatabaseUnavailable(error)) return new AppError("service_unavailable", "database unavailable", { cause: error });
  if (isInvalidInput(error)) return new AppError("bad_request", "request contains a value that cannot be stored", { cause: error });
  return undefined;
}

/** Session and token responses must never be stored by a cache (the JWKS route overrides this). */
const noStore: express.RequestHandler = (_req, res, next) => {
  res.setHeader("cache-control", "no-store");
  next();
};

const SIGN_IN = "/api/auth/sign-in/email";
const SIGN_UP = "/api/auth/sign-up/email";
const RESET_PASSWORD = "/api/auth/reset-password";
/** The signed-in routes that check the user's password, limited per IP and per user. */
const SESSION_PASSWORD_ROUTES = ["/api/auth/change-password", "/api/auth/delete-user"];
/** Every route that checks a password besides sign-in: those, and a verification link confirmed with one. */
const PASSWORD_CHECK_ROUTES = [...SESSION_PASSWORD_ROUTES, "/api/auth/verify-email"];
/** The routes that send mail, limited per IP and per address (middleware/rate-limits.ts). */
const MAIL_ROUTES = ["/api/auth/request-password-reset", "/api/auth/send-verification-email", "/api/auth/change-email"];
/** Largest credential body; larger answers 413 before parsing. */
export const JSON_BODY_LIMIT = "16kb";

/**
 * Builds the identity Express app (never listens). Middleware order: request context and
 * logging, security headers, better-auth error fields, CORS, origin check, no-store, per-IP rate limits, body parsing
 * (415/413/400), per-account rate limits, cookies, routes, 404, errors.
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
  const rateLimits = createRateLimits(config.rateLimits, {
    logger,
    ...(deps.now ? { now: deps.now } : {}),
    ...(deps.rateLimitRedis ? { redis: deps.rateLimitRedis } : {}),
    mail: config.mailRateLimits,
  });
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", config.trustProxy);
  app.use(requestLogging(logger));
  app.use(securityHeaders());
  app.use(healthRoutes(db));
  app.use("/api/auth", betterAuthErrorFields);
  app.use("/api/auth", corsPolicy({ origins: config.corsOrigins, exposeAuthHeader: config.exposeAuthHeader }));
  app.use("/api/auth", originCheck(config.corsOrigins));
  app.use("/api/auth", noStore);
  // Per-IP limits come before the body is read; per-account limits need the email in it.
  app.use(SIGN_IN, rateLimits.signIn.perIp);
  app.use(SIGN_UP, rateLimits.signUp.perIp);
  // Provider sign-in shares the email sign-in budget per IP (each one starts a flow at a provider).
  app.use("/api/auth/sign-in/social", rateLimits.signIn.perIp);
  app.use(MAIL_ROUTES, rateLimits.mail.perIp);
  // Setting a new password hashes it: the same per-IP budget as sign-in (the GET link is not counted).
  app.use(RESET_PASSWORD, rateLimits.resetPassword.perIp);
  app.use(PASSWORD_CHECK_ROUTES, rateLimits.passwordChecks.perIp);
  app.use("/api/auth", jsonBody({ limit: JSON_BODY_LIMIT }));
  app.use(SIGN_IN, ...rateLimits.signIn.perAccount);
  app.use(SIGN_UP, ...rateLimits.signUp.perAccount);
  app.use(MAIL_ROUTES, rateLimits.mail.perAddress);
  // Verified sign-up mails whether the address is new or taken and answers alike: it counts as mail.
  if (config.requireEmailVerification) app.use(SIGN_UP, rateLimits.mail.perAddress);
  app.use("/api/auth", cookieParser());
  // Password work of this request waits in the queue of its client's address (services/password-queue.ts).
  app.use("/api/auth", (req, _res, next) => passwordQueue.asClient(clientKey(req), next));
  const cookie = { name: config.cookieName, secure: config.secureCookies };
  app.use(SESSION_PASSWORD_ROUTES, resolveSession(service.sessions, cookie), ...rateLimits.passwordChecks.perUser);
  // With verification required, sign-up answers new and taken addresses alike (docs/accounts.md).
  const verifiedSignUp = config.requireEmailVerification
    ? new VerifiedSignUp({ service, baseUrl: config.baseUrl, logger, ...(deps.now ? { now: deps.now } : {}) })
    : undefined;
  app.use("/api/auth", authRoutes(service, cookie, verifiedSignUp));
  app.use("/api/auth", accountRoutes(service, cookie));
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
  app.use("/api/auth", socialRoutes(service, social, cookie));
  app.use(notFoundHandler());
  app.use(markPasswordRejections);
  app.use(errorHandler({ logger, classify }));
  return { app, service, rateLimits, close: () => rateLimits.close() };
}
