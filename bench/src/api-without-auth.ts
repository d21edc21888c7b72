#!/usr/bin/env node
import { createApp } from "@app/api/dist/app.js";
import { loadApiConfig } from "@app/api/dist/config.js";
import { createHttpServer } from "@app/api/dist/http-server.js";
/**
 * Bench only: the API built exactly as apps/api's server.ts builds it (same config from the same
 * environment, same middleware, same GET /api/me handler and JSON entry), except that its verifier
 * does not authenticate: every request is answered as one constant identity, whatever it carries
 * (the load sends no Authorization header at all). This is "the same handler without
 * authentication" of the first scenario, measured against the real API on the same core.
 *
 * Input: the API's environment plus BENCH_IDENTITY, the JSON of `{ userId, kid, claims }` of the
 * user the authenticated side's token names (so both sides answer the same body).
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
/** A verifier that does not verify: the answer is the constant identity, synchronously. */
function unauthenticated(): Verifier {
  const absent = (what: string) => () => {
    throw new Error(`the unauthenticated bench API has no ${what}`);
  };
  return {
    verifyNow: () => constant,
    verify: async () => constant,
    verifyToken: async () => constant,
    get keySet(): Verifier["keySet"] {
      return absent("key set")();
    },
    stats: absent("verifier counters"),
    close: () => undefined,
  };
}

const api = createApp({ config, db, logger, verifier: unauthenticated() });
const server = createHttpServer(api, config);
await api.start();
server.listen(config.port, config.host, () => logger.info({ port: config.port }, "listening"));

async function stop(): Promise<void> {
  server.close();
  server.closeAllConnections();
  await api.shutdown();
  await db.close();
  process.exit(0);
}
process.once("SIGTERM", () => void stop());
process.once("SIGINT", () => void stop());
