#!/usr/bin/env node
/**
 * Bench only: the peer of identity's get-session. better-auth with its JWT plugin on Express and
 * PostgreSQL, set up as its documentation shows (better-auth.com/docs/integrations/express and
 * /docs/plugins/jwt): `betterAuth({ database: new Pool(...), emailAndPassword, plugins: [jwt()] })`,
 * the handler mounted with `toNodeHandler` on `/api/auth/*splat` before any body parser, the
 * schema created by better-auth's own migration API (`getMigrations(...).runMigrations()`).
 *
 * With the JWT plugin, `GET /api/auth/get-session` answers the session and signs a JWT into the
 * `set-auth-jwt` header, as identity's `POST /api/auth/get-session` does: the pair compares those two.
 *
 * Two settings depart from the defaults, each to match how the bench runs identity: the rate
 * limiter stays on but with limits the load never reaches (identity runs with
 * RATE_LIMIT_*_MAX=100000000), and telemetry is off (no network from the bench).
 *
 * Input: PORT, DATABASE_URL (a database of its own), BETTER_AUTH_SECRET, BASE_URL.
 */
import { betterAuth } from "better-auth";
import { getMigrations } from "better-auth/db/migration";
import { toNodeHandler } from "better-auth/node";
import { jwt } from "better-auth/plugins";
import express from "express";
import pg from "pg";

const env = process.env;
const port = Number(env.PORT ?? 0);
const baseURL = env.BASE_URL || `http://127.0.0.1:${port}`;
const UNREACHED = { window: 10, max: 100_000_000 };

const options = {
  database: new pg.Pool({ connectionString: env.DATABASE_URL }),
  secret: env.BETTER_AUTH_SECRET,
  baseURL,
  emailAndPassword: { enabled: true },
  plugins: [jwt()],
  rateLimit: {
    enabled: true,
    ...UNREACHED,
    customRules: { "/sign-up/*": UNREACHED, "/sign-in/*": UNREACHED },
  },
  telemetry: { enabled: false },
};

const { runMigrations } = await getMigrations(options);
await runMigrations();
const auth = betterAuth(options);

const app = express();
app.all("/api/auth/*splat", toNodeHandler(auth));
app.use(express.json());
app.get("/healthz", (_req, res) => {
  res.json({ ok: true });
});

const server = app.listen(port, "127.0.0.1");
const stop = () => {
  server.close();
  server.closeAllConnections();
  void options.database.end().finally(() => process.exit(0));
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
