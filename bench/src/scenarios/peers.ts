/**
 * The "peers" scenario: the product against the setups a team would otherwise adopt, side by side
 * in one run, in adjacent A B B A rounds on the server core (as the pairs scenario's adjacent mode,
 * bench/src/scenarios/pairs.ts): A is the peer, B is ours, each round's ratio is (B1 + B2) ÷ (A1 + A2) req/s.
 *
 * - get-session with JWT issuance: better-auth + JWT plugin on Express and PostgreSQL
 *   (better-auth-server.ts, `GET /api/auth/get-session`, JWT in `set-auth-jwt`) vs identity's
 *   `POST /api/auth/get-session` (JWT in `set-auth-jwt`). Both read the session from PostgreSQL
 *   (same server, same core, databases of their own) and sign one EdDSA JWT per request.
 * - `GET /api/me`: the resource server better-auth documents (jose-resource-server.ts: Express +
 *   jose `jwtVerify` per request) vs the API as `pnpm start` runs it, with one repeated token and
 *   with the cold rotation (more distinct tokens than the API's verify cache holds).
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ensureDatabase } from "@app/stack";
import { pinDatabase, startTwin, type Twin } from "../infra.js";
import { cookieFrom, PEER_PAIRS, type PeerPair, type PeerResult, type PeerSide, type Server, summarizePeer } from "../peers/defs.js";
import { pin } from "../proc.js";
import type { HttpResult, HttpSpec } from "../protocol.js";
import { getSessionToken, mapLimit } from "../seed.js";
import { rotate } from "../stats.js";
import type { Ctx } from "./context.js";
import { combine } from "./pairs.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));

interface Servers {
  url: Record<Server, string>;
  pid: Record<Server, number>;
}

function specFor(ctx: Ctx, servers: Servers, s: PeerSide, durationSec: number): HttpSpec {
  // One cursor per server, so each server sees one strict rotation over the cold pool.
  const cursor = `peers-${s.server}`;
  return {
    url: `${servers.url[s.server]}${s.path}`,
    method: s.method,
    connections: ctx.settings.connections,
    durationSec,
    warmupSec: 0,
    serverPids: [servers.pid[s.server]],
    ...(s.pg && ctx.db.postmasterPid ? { extraTreePid: ctx.db.postmasterPid } : {}),
    ...(s.load === "hot" ? { headers: { authorization: `Bearer ${ctx.hotToken}` } } : {}),
    ...(s.load === "cold" ? { rotate: { pool: "cold", header: "authorization", prefix: "Bearer ", cursor } } : {}),
    ...(s.load === "identity-cookies" ? { rotate: { pool: "cookies", header: "cookie", prefix: "", cursor } } : {}),
    ...(s.load === "better-auth-cookies" ? { rotate: { pool: "better-auth-cookies", header: "cookie", prefix: "", cursor } } : {}),
  };
}

async function signUpBetterAuth(url: string, count: number): Promise<string[]> {
  const runId = randomBytes(3).toString("hex");
  return mapLimit(
    Array.from({ length: count }, (_, i) => i),
    4,
    async (i) => {
      const res = await fetch(`${url}/api/auth/sign-up/email`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: url },
        body: JSON.stringify({ email: `peer-${runId}-${i}@example.com`, password: "correct horse battery staple", name: `Peer User ${i}` }),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`better-auth sign-up answered HTTP ${res.status}`);
      return cookieFrom(res.headers.getSetCookie(), "better-auth.session_token");
    },
  );
}

/** One request of each side before any load: the right status, and a JWT where one is due. */
async function checkSides(servers: Servers, ctx: Ctx, betterAuthCookie: string): Promise<void> {
  const session = await fetch(`${servers.url["better-auth"]}/api/auth/get-session`, { headers: { cookie: betterAuthCookie } });
  await session.arrayBuffer();
  if (session.status !== 200 || !session.headers.get("set-auth-jwt")) {
    throw new Error(`better-auth get-session answered HTTP ${session.status} without set-auth-jwt`);
  }
  await getSessionToken(servers.url.identity, ctx.users[0]?.cookie ?? "");
  for (const server of ["jose", "api"] as const) {
    const res = await fetch(`${servers.url[server]}/api/me`, { headers: { authorization: `Bearer ${ctx.hotToken}` } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${server} GET /api/me answered HTTP ${res.status}`);
  }
}

function countInvalid(ctx: Ctx, pair: PeerPair, s: PeerSide, result: HttpResult): void {
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad > 0) {
    ctx.validNon2xx.count += bad;
    ctx.validNon2xx.where.push(`peers ${pair.key} ${s.label}: ${bad} (${JSON.stringify(result.statusCodes)})`);
  }
}

async function adjacentRounds(ctx: Ctx, servers: Servers, runSec: number): Promise<PeerResult[]> {
  const runs = new Map<string, Array<[HttpResult, HttpResult]>>(PEER_PAIRS.map((p) => [p.key, []]));
  const one = (s: PeerSide) => ctx.worker.send<HttpResult>({ cmd: "http", spec: specFor(ctx, servers, s, runSec) });
  for (let round = 0; round < ctx.settings.adjacentRounds; round += 1) {
    for (const pair of rotate(PEER_PAIRS, round)) {
      pinDatabase(ctx.db, ctx.cores.server);
      const a1 = await one(pair.a);
      const b1 = await one(pair.b);
      const b2 = await one(pair.b);
      const a2 = await one(pair.a);
      for (const r of [a1, a2]) countInvalid(ctx, pair, pair.a, r);
      for (const r of [b1, b2]) countInvalid(ctx, pair, pair.b, r);
      const a = combine(a1, a2);
      const b = combine(b1, b2);
      (runs.get(pair.key) as Array<[HttpResult, HttpResult]>).push([a, b]);
      const cpuUs = (r: HttpResult) => Math.round(((r.serverCpuMs + r.extraCpuMs) * 1000) / Math.max(1, r.requests));
      ctx.log(
        `peers ${round + 1}/${ctx.settings.adjacentRounds} ${pair.key.padEnd(16)} peer ${Math.round(a.rps)} req/s ${cpuUs(a)} µs CPU/req, ours ${Math.round(b.rps)} req/s ${cpuUs(b)} µs CPU/req, ours/peer ${(b.rps / a.rps).toFixed(2)}`,
      );
    }
  }
  return PEER_PAIRS.map((pair) => summarizePeer(pair, runs.get(pair.key) ?? []));
}

export async function peersScenario(ctx: Ctx): Promise<PeerResult[]> {
  const identityUrl = ctx.stack.identityUrls[0] as string;
  const started: Twin[] = [];
  const identityPid = ctx.stack.identity1.child.pid as number;
  try {
    const databaseUrl = await ensureDatabase(ctx.db.serverUrl, "better_auth");
    ctx.log("peers: starting better-auth (JWT plugin, Express, PostgreSQL database better_auth) and the jose resource server");
    const betterAuth = await startTwin("better-auth", path.join(HERE, "..", "peers", "better-auth-server.js"), ctx.cores.server, [], {
      ...process.env,
      NODE_ENV: "production",
      DATABASE_URL: databaseUrl,
      BETTER_AUTH_SECRET: randomBytes(32).toString("base64url"),
      BETTER_AUTH_TELEMETRY: "0",
      BASE_URL: "",
    });
    started.push(betterAuth);
    const jose = await startTwin("jose resource server", path.join(HERE, "..", "peers", "jose-resource-server.js"), ctx.cores.server, [], {
      ...process.env,
      NODE_ENV: "production",
      JWKS_URL: `${identityUrl}/api/auth/jwks`,
      JWT_ISSUER: ctx.stack.baseUrl,
      JWT_AUDIENCE: ctx.stack.baseUrl,
    });
    started.push(jose);
    const servers: Servers = {
      url: { "better-auth": betterAuth.url, identity: identityUrl, jose: jose.url, api: ctx.stack.apiUrls[0] as string },
      pid: { "better-auth": betterAuth.pid, identity: identityPid, jose: jose.pid, api: ctx.stack.api1.child.pid as number },
    };
    const cookies = await signUpBetterAuth(betterAuth.url, ctx.settings.users);
    await ctx.worker.send({ cmd: "pool", name: "better-auth-cookies", values: cookies });
    await checkSides(servers, ctx, cookies[0] as string);
    pin(identityPid, ctx.cores.server);
    pinDatabase(ctx.db, ctx.cores.server);
    const runSec = 2 * ctx.settings.adjacentSec;
    const warmupSec = Math.max(2, 2 * ctx.settings.warmupSec);
    ctx.log(
      `peers: warming up every side (${warmupSec} s each), then ${ctx.settings.adjacentRounds} rounds of A B B A, ${runSec} s per run`,
    );
    for (const pair of PEER_PAIRS) {
      for (const s of [pair.a, pair.b]) await ctx.worker.send<HttpResult>({ cmd: "http", spec: specFor(ctx, servers, s, warmupSec) });
    }
    return await adjacentRounds(ctx, servers, runSec);
  } finally {
    pin(identityPid, ctx.cores.load);
    for (const twin of started.reverse()) await twin.stop();
  }
}
