#!/usr/bin/env node
/**
 * Bench only: the peer of the API's `GET /api/me`. The resource server better-auth's JWT plugin
 * documentation recommends (better-auth.com/docs/plugins/jwt, "Verifying the token"): Express,
 * jose `createRemoteJWKSet` on the issuer's JWKS and `jwtVerify(token, JWKS, { issuer, audience })`
 * on every request. The key set is created once, at start: jose caches the fetched keys per
 * instance and refetches on an unknown `kid`, which is what the documentation asks of a verifier
 * ("can be cached indefinitely ... fetch the JWKS again" on a new kid).
 *
 * It answers the same body as the API: `{ data: { id, email, name } }` from the token's claims.
 *
 * Input: PORT, JWKS_URL, JWT_ISSUER, JWT_AUDIENCE.
 */
import express from "express";
import { createRemoteJWKSet, jwtVerify } from "jose";

const env = process.env;
const port = Number(env.PORT ?? 0);
const JWKS = createRemoteJWKSet(new URL(env.JWKS_URL ?? ""));
const issuer = env.JWT_ISSUER ?? "";
const audience = env.JWT_AUDIENCE ?? issuer;
const text = (value: unknown) => (typeof value === "string" ? value : null);

const app = express();
app.get("/healthz", (_req, res) => {
  res.json({ ok: true });
});
app.get("/api/me", async (req, res) => {
  const header = req.headers.authorization ?? "";
  const token = header.startsWith("Bearer ") ? header.slice("Bearer ".length) : "";
  try {
    const { payload } = await jwtVerify(token, JWKS, { issuer, audience });
    res.json({ data: { id: payload.sub, email: text(payload.email), name: text(payload.name) } });
  } catch {
    res.status(401).json({ error: { code: "unauthorized", message: "invalid token" } });
  }
});

const server = app.listen(port, "127.0.0.1");
const stop = () => {
  server.close();
  server.closeAllConnections();
  process.exit(0);
};
process.once("SIGTERM", stop);
process.once("SIGINT", stop);
