#!/usr/bin/env node
/**
 * The benchmark's reference server (bench-only, never part of the product). One Express 5 app with
 * the API's middleware that matters for a small authenticated GET (request context + pino-http
 * access log at the same level, CORS), answering the same JSON shape as GET /api/me, `ok({id,email,name})`:
 *
 * - `/plain`         no authentication: the Express baseline.
 * - `/plain-verify`  `/plain` + one raw node:crypto Ed25519 verification: the cold path's bound.
 * - `/legacy-log/plain` the same with the product's previous access logging (pino-http, redaction,
 *                    synchronous stdout), kept in bench/src/legacy-logging.ts for in-run comparisons.
 * - `/jose`          the product's verifier (`@app/auth-verify`, verified-token cache on, as the API).
 * - `/jose-nocache`  the same verifier with the cache disabled (VERIFY_CACHE=false).
 * - `/cookie`        the rejected alternative: the session cookie looked up in PostgreSQL with Prisma,
 *                    exactly as identity's `Sessions.validate` does (session join user by id, HMAC-SHA-256
 *                    keyed from AUTH_SECRET, compared in constant time, expiry checked).
 * - `/cookie-pg`     the same lookup as one hand-written SQL statement on a raw `pg` pool (the
 *                    cheapest honest form of the alternative).
 * - `/__stats`, `/__mem`: verifier counters and (with --expose-gc) heap after a full GC.
 */
import { createHmac, generateKeyPairSync, hkdfSync, sign, timingSafeEqual, verify } from "node:crypto";
import { createServer } from "node:http";
import { createVerifier, type VerifiedToken, type Verifier } from "@app/auth-verify";
import { ok } from "@app/contracts";
import { createDb } from "@app/db";
import { AppError, corsPolicy, createLogger, errorHandler, notFoundHandler, requestLogging, setContextUser } from "@app/http-kit";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import pg from "pg";
import { createLegacyLogger, legacyRequestLogging } from "./legacy-logging.js";

const env = process.env;
const port = Number(env.PORT ?? 0);
const databaseUrl = env.DATABASE_URL ?? "";
const jwksUrl = env.JWKS_URL ?? "";
const issuer = env.JWT_ISSUER ?? "";
const audience = env.JWT_AUDIENCE ?? issuer;
const cookieName = env.COOKIE_NAME ?? "identity.session_token";
const logger = createLogger({ name: "bench-ref", level: env.LOG_LEVEL ?? "info" });

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/;
const text = (value: unknown) => (typeof value === "string" ? value : null);

function verifierWith(cache: boolean): Verifier {
  return createVerifier({ jwksUrl, issuer, audience, verifiedCache: cache });
}
const cached = verifierWith(true);
const uncached = verifierWith(false);

function toAuthError(error: unknown): AppError {
  const code = (error as { code?: string }).code;
  return new AppError(code === "jwks_unavailable" ? "service_unavailable" : "unauthorized", "unauthorized", { cause: error });
}

/**
 * The JSON entry of the API reduced to what GET /api/me runs: verify, tag the context, answer ok().
 * Like the API's `jsonRoute`, it answers in the request's own turn when the verifier does
 * (`verifyNow`: a cache hit on a fresh key set) and awaits jose otherwise.
 */
function joseRoute(verifier: Pick<Verifier, "verifyNow">): RequestHandler {
  const answer = (res: Response, auth: VerifiedToken): void => {
    setContextUser(auth.userId);
    res.status(200).json(ok({ id: auth.userId, email: text(auth.claims.email), name: text(auth.claims.name) }));
  };
  return (req, res) => {
    let auth: VerifiedToken | Promise<VerifiedToken>;
    try {
      auth = verifier.verifyNow(req.headers.authorization);
    } catch (error) {
      throw toAuthError(error);
    }
    if (auth instanceof Promise) {
      return auth.then(
        (value) => answer(res, value),
        (error: unknown) => {
          throw toAuthError(error);
        },
      );
    }
    answer(res, auth);
  };
}

/**
 * "Express baseline + raw Ed25519 verify" as a route: /plain plus one node:crypto verification of
 * a JWT-sized signing input (the product's token size), so the cold path's bound is measured under
 * the same conditions as the cold path itself rather than added up from two separate runs.
 */
function plainVerifyRoute(): RequestHandler {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const input = Buffer.from(`${"h".repeat(70)}.${"p".repeat(200)}`);
  const signature = sign(null, input, privateKey);
  return (_req, res) => {
    if (!verify(null, input, publicKey, signature)) throw new AppError("unauthorized", "bench signature did not verify");
    res.status(200).json(ok({ id: "bench-user-id-0000000000000000", email: "bench@example.com", name: "Bench" }));
  };
}

function readCookie(req: Request): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === cookieName) return decodeURIComponent(part.slice(eq + 1).trim());
  }
  return undefined;
}

/** The session HMAC key, derived from AUTH_SECRET as apps/identity/src/services/sessions.ts derives it. */
const sessionKey = Buffer.from(hkdfSync("sha256", env.AUTH_SECRET ?? "", "token-auth-service", "session-secret-hmac", 32));

function secretMatches(stored: Uint8Array, secret: string): boolean {
  const expected = Buffer.from(stored);
  const actual = createHmac("sha256", sessionKey).update(secret).digest();
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

const db = createDb(databaseUrl);
const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });

/** Mirrors apps/identity Sessions.validate (without the sliding-expiry write, never due here). */
const cookiePrisma: RequestHandler = async (req, res) => {
  const token = readCookie(req);
  if (!token || !TOKEN_SHAPE.test(token)) throw new AppError("unauthorized", "no session");
  const [id = "", secret = ""] = token.split(".");
  const found = await db.prisma.session.findUnique({ where: { id }, include: { user: true }, relationLoadStrategy: "join" });
  if (!found || !secretMatches(found.secretHash, secret) || found.expiresAt.getTime() <= Date.now()) {
    throw new AppError("unauthorized", "no session");
  }
  setContextUser(found.user.id);
  res.status(200).json(ok({ id: found.user.id, email: found.user.email, name: found.user.name }));
};

const COOKIE_SQL =
  'SELECT s.secret_hash, s.expires_at, u.id, u.email, u.name FROM "session" s JOIN "user" u ON u.id = s.user_id WHERE s.id = $1';

const cookieRawPg: RequestHandler = async (req, res) => {
  const token = readCookie(req);
  if (!token || !TOKEN_SHAPE.test(token)) throw new AppError("unauthorized", "no session");
  const [id = "", secret = ""] = token.split(".");
  const { rows } = await pool.query<{ secret_hash: Buffer; expires_at: Date; id: string; email: string; name: string }>({
    name: "bench-cookie",
    text: COOKIE_SQL,
    values: [id],
  });
  const row = rows[0];
  if (!row || !secretMatches(row.secret_hash, secret) || row.expires_at.getTime() <= Date.now()) {
    throw new AppError("unauthorized", "no session");
  }
  setContextUser(row.id);
  res.status(200).json(ok({ id: row.id, email: row.email, name: row.name }));
};

/** Runs synchronous middlewares in order, as one. */
function chain(handlers: RequestHandler[]): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => {
    let i = 0;
    const step = (error?: unknown): void => {
      const handler = handlers[i];
      i += 1;
      if (error !== undefined || handler === undefined) next(error);
      else void handler(req, res, step);
    };
    step();
  };
}
const productLogging = chain(requestLogging(logger));
const legacyLogging = chain(legacyRequestLogging(createLegacyLogger("bench-ref", env.LOG_LEVEL ?? "info")));

const app = express();
app.disable("x-powered-by");
app.set("trust proxy", "loopback");
app.use((req, res, next) => (req.url.startsWith("/legacy-log/") ? legacyLogging : productLogging)(req, res, next));
app.get("/healthz", (_req, res) => {
  res.json({ status: "ok" });
});
app.get("/__stats", (_req, res) => {
  res.json({ cached: cached.stats(), uncached: uncached.stats() });
});
app.get("/__mem", (_req, res) => {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
  res.json({ gc: gc !== undefined, ...process.memoryUsage() });
});
app.use(corsPolicy({ origins: ["http://localhost:5173"], exposeAuthHeader: true }));
const plain: RequestHandler = (_req, res) => {
  res.status(200).json(ok({ id: "bench-user-id-0000000000000000", email: "bench@example.com", name: "Bench" }));
};
app.get("/plain", plain);
app.get("/legacy-log/plain", plain);
app.get("/plain-verify", plainVerifyRoute());
app.get("/jose", joseRoute(cached));
app.get("/jose-nocache", joseRoute(uncached));
app.get("/cookie", cookiePrisma);
app.get("/cookie-pg", cookieRawPg);
app.use(notFoundHandler());
app.use(errorHandler({ logger }));

const server = createServer(app);
server.keepAliveTimeout = 65_000;
server.listen(port, "127.0.0.1", () => {
  const address = server.address();
  logger.info({ port: typeof address === "object" && address ? address.port : port }, "listening");
});

async function stop(): Promise<void> {
  server.close();
  server.closeAllConnections();
  cached.close();
  uncached.close();
  await Promise.allSettled([db.close(), pool.end()]);
  process.exit(0);
}
process.once("SIGTERM", () => void stop());
process.once("SIGINT", () => void stop());
