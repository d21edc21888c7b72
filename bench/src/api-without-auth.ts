#!/usr/bin/env node
import { createApp, createHttpServer, loadApiConfig, verifierFromConfig } from "@app/api/embed";
/**
 * Bench only: the API built exactly as apps/api's server.ts builds it (same config from the same
 * environment, same middleware, same GET /api/me handler and JSON entry, the same verifier), with
 * one difference: a request **without** an Authorization header is not refused but answered as one
 * constant identity, without any verification. A request with a bearer is verified exactly as by
 * the API.
 *
 * So one process serves both sides of the first scenario, "GET /api/me with a valid bearer
 * vs the same handler without authentication": same JIT state, same heap, same log pipe; only the
 * authentication differs (as the reference server's /plain and /jose share one process).
 *
 * Input: the API's environment plus BENCH_IDENTITY, the JSON of `{ userId, kid, claims }` of the
 * user the bench's hot token names (so both sides answer the same body).
 */
import type { VerifiedToken, Verifier } from "@app/auth-verify";
import { createDb } from "@app/db";
import { createLogger } from "@app/http-kit";

const identity = JSON.parse(process.env.BENCH_IDENTITY ?? "null") as VerifiedToken | null;
if (!identity || typeof identity.userId !== "string") throw new Error("BENCH_IDENTITY must hold { userId, kid, claims }");
const constant: VerifiedToken = Object.freeze({
  userId: identity.userId,
  kid: identity.kid,
  claims: Object.freeze({ ...identity.claims }),
});

const config = loadApiConfig();
const logger = createLogger({ name: "api-without-auth", level: config.logLevel });
const db = createDb(config.databaseUrl);
const real = verifierFromConfig(config);
/** The API's verifier, except that no credential at all means the constant identity. */
const verifier: Verifier = {
  ...real,
  verifyNow: (authorization) => (authorization === undefined ? constant : real.verifyNow(authorization)),
  verify: async (authorization) => (authorization === undefined ? constant : real.verify(authorization)),
};

const api = createApp({ config, db, logger, verifier });
const server = createHttpServer(api, config);
await api.start();
server.listen(config.port, config.host, () => logger.info({ port: config.port }, "listening"));

async function stop(): Promise<void> {
  server.close();
  server.closeAllConnections();
  await api.shutdown();
  real.close();
  await db.close();
  process.exit(0);
}
process.once("SIGTERM", () => void stop());
process.once("SIGINT", () => void stop());
