import { type Db, isDatabaseUnavailable, isInvalidInput } from "@app/db";
import { AppError, corsPolicy, errorHandler, jsonBody, notFoundHandler, requestLogging } from "@app/http-kit";
import cookieParser from "cookie-parser";
import express, { type Express } from "express";
import type { Logger } from "pino";
import type { IdentityConfig } from "./config.js";
import { originCheck } from "./middleware/origin-check.js";
import { authRoutes } from "./routes/auth-routes.js";
import { healthRoutes } from "./routes/health.js";
import { IdentityService } from "./services/identity.js";

/** What the identity app is built from. */
export interface IdentityDeps {
  config: IdentityConfig;
  db: Db;
  logger: Logger;
  /** Clock for tests that freeze time. */
  now?: () => number;
}

/** The built app and the service behind it (for tests and the server's housekeeping). */
export interface IdentityApp {
  app: Express;
  service: IdentityService;
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

/**
 * Builds the identity Express app (never listens). Middleware order: request context and
 * logging, CORS, origin check, no-store, body parsing (415/413/400), cookies, routes, 404, errors.
 */
export function createApp(deps: IdentityDeps): IdentityApp {
  const { config, db, logger } = deps;
  const service = new IdentityService({
    prisma: db.prisma,
    logger,
    settings: { authSecret: config.authSecret, issuer: config.issuer, audience: config.audience, sessionTtlMs: config.sessionTtlMs },
    ...(deps.now ? { now: deps.now } : {}),
  });
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", config.trustProxy);
  app.use(requestLogging(logger));
  app.use(healthRoutes(db));
  app.use("/api/auth", corsPolicy({ origins: config.corsOrigins, exposeAuthHeader: config.exposeAuthHeader }));
  app.use("/api/auth", originCheck(config.corsOrigins));
  app.use("/api/auth", noStore);
  app.use("/api/auth", jsonBody({ limit: "16kb" }));
  app.use("/api/auth", cookieParser());
  app.use("/api/auth", authRoutes(service, { name: config.cookieName, secure: config.secureCookies }));
  app.use(notFoundHandler());
  app.use(errorHandler({ logger, classify }));
  return { app, service };
}
