import pg from "pg";
import { pin } from "../proc.js";
import { getSessionToken, mapLimit, type SeedUser, signIn } from "../seed.js";
import { percentile } from "../stats.js";
import { type Ctx, countValid, fmtRun, http, type VariantResult } from "./context.js";

export interface IdentityResult {
  getSession: VariantResult;
  dbRoundTripsPerGetSession: number;
  statementsPerGetSession: number;
  dbRoundTripsPerJwks: number;
  signInMs: { p50: number; p99: number; mean: number; n: number };
  kdf: string;
}

export async function identityScenario(ctx: Ctx): Promise<IdentityResult> {
  const identity = ctx.stack.identity1;
  const pid = identity.child.pid as number;
  const url = ctx.stack.identityUrls[0] as string;
  pin(pid, ctx.cores.server);
  const getSession: VariantResult = { key: "get-session", label: "identity POST /api/auth/get-session (JWT issuance)", rounds: [] };
  let signInMs: number[] = [];
  try {
    for (let round = 0; round < ctx.settings.rounds; round += 1) {
      const result = await http(ctx, {
        url: `${url}/api/auth/get-session`,
        method: "POST",
        rotate: { pool: "cookies", header: "cookie", prefix: "", cursor: "identity-1" },
        serverPids: [pid],
        ...(ctx.db.postmasterPid ? { extraTreePid: ctx.db.postmasterPid } : {}),
      });
      getSession.rounds.push(result);
      countValid(ctx, "identity get-session", result);
      ctx.log(`identity round ${round + 1}/${ctx.settings.rounds} get-session ${fmtRun(result)}`);
    }
    // Sign-in latency, one at a time (the password KDF dominates), on a user of its own.
    const user = ctx.users.at(-1) as SeedUser;
    await signIn(url, user);
    signInMs = [];
    for (let i = 0; i < ctx.settings.signIns; i += 1) signInMs.push(await signIn(url, user));
  } finally {
    pin(pid, ctx.cores.load);
  }
  // Database round trips per get-session and per JWKS, at identity-2 (behind the counting proxy).
  const url2 = ctx.stack.identityUrls[1] as string;
  const cookies = ctx.users.map((u) => u.cookie);
  await getSessionToken(url2, cookies[0] as string);
  const n = 200;
  const before = ctx.stack.identityProxy.snapshot();
  await mapLimit(
    Array.from({ length: n }, (_, i) => i),
    4,
    (i) => getSessionToken(url2, cookies[i % cookies.length] as string),
  );
  const after = ctx.stack.identityProxy.snapshot();
  const jwksBefore = ctx.stack.identityProxy.snapshot();
  for (let i = 0; i < 50; i += 1) await (await fetch(`${url2}/api/auth/jwks`)).arrayBuffer();
  const jwksAfter = ctx.stack.identityProxy.snapshot();
  const kdf = await passwordHashParams(ctx.db.url);
  const out: IdentityResult = {
    getSession,
    dbRoundTripsPerGetSession: (after.roundTrips - before.roundTrips) / n,
    statementsPerGetSession: (after.statements - before.statements) / n,
    dbRoundTripsPerJwks: (jwksAfter.roundTrips - jwksBefore.roundTrips) / 50,
    signInMs: {
      p50: percentile(signInMs, 50),
      p99: percentile(signInMs, 99),
      mean: signInMs.reduce((a, b) => a + b, 0) / Math.max(1, signInMs.length),
      n: signInMs.length,
    },
    kdf,
  };
  ctx.log(
    `identity: ${out.dbRoundTripsPerGetSession.toFixed(2)} DB round trips per get-session, sign-in p50 ${out.signInMs.p50.toFixed(1)} ms (${kdf})`,
  );
  return out;
}

async function passwordHashParams(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ password_hash: string }>(
      "SELECT password_hash FROM account WHERE password_hash IS NOT NULL LIMIT 1",
    );
    const hash = rows[0]?.password_hash ?? "";
    const match = /^\$(argon2\w+)\$v=(\d+)\$([^$]+)\$/.exec(hash);
    return match ? `${match[1]} v=${match[2]} ${match[3]}` : "unknown";
  } finally {
    await client.end();
  }
}

// ---- key-set traffic -----------------------------------------------------------------------------
