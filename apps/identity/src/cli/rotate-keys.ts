#!/usr/bin/env node
// `pnpm keys:rotate`: makes a new signing key in the jwks table (same DATABASE_URL and
// AUTH_SECRET as the identity service). The key is published at once, starts signing after
// KEY_ACTIVATION_DELAY_MS (default 10.5 min, so every verifier's cached key set has it first),
// and the previous key stays published one token lifetime (30 days) + 5 min after that, then is
// retired. Keys whose overlap has already passed are retired now.
import { createDb } from "@app/db";
import { createLogger } from "@app/http-kit";
import { loadIdentityConfig } from "../config.js";
import { KeySet } from "../services/key-set.js";

const config = loadIdentityConfig();
const logger = createLogger({ name: "keys:rotate", level: config.logLevel === "info" ? "warn" : config.logLevel });
const db = createDb(config.databaseUrl, { max: 2 });
try {
  const keys = new KeySet({ prisma: db.prisma, authSecret: config.authSecret, logger, activationDelayMs: config.keyActivationDelayMs });
  const before = await keys.view();
  const created = await keys.rotate();
  const retired = await keys.retireExpired();
  const after = await keys.view();
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(`new signing key ${created.kid}: published now, signs from ${keys.activatesAt(created).toISOString()}`);
  out(`signing now with ${after.signing.kid} (was ${before.signing.kid}); published keys: ${after.published.map((k) => k.kid).join(", ")}`);
  if (retired) out(`retired ${retired} superseded key(s) whose overlap had passed`);
} catch (error) {
  process.stderr.write(`keys:rotate failed: ${(error as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await db.close();
}
