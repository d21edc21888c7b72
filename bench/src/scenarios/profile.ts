/** The "profile" scenario: `--cpu-prof` twins of the API (cold, repeated token) and identity (get-session), summarized per frame and package. */
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { ENTRY, ROOT } from "@app/stack";
import { BENCH_SMTP_URL, pinDatabase, startTwin } from "../infra.js";
import { newestProfile, type ProfileSummary, summarizeProfile } from "../profile.js";
import { type Ctx, countValid, fmtRun, http } from "./context.js";

export interface ProfileResult {
  apiCold?: ProfileSummary;
  apiHot?: ProfileSummary;
  identityGetSession?: ProfileSummary;
  dir: string;
}

const WATCH = {
  "key decryption (SecretBox.open / createPrivateKey)": /(^open .*secret-box)|createPrivateKey/,
  "jose jwtVerify (inclusive)": /^jwtVerify /,
  "Ed25519 verify (WebCrypto)": /^verify .*node:internal\/crypto\/(webcrypto|cfrg|sig)/,
  "pino / pino-http logging (inclusive)": /node_modules\/\.pnpm\/pino/,
};

async function profileApi(ctx: Ctx, dir: string, pool: "cold" | "hot"): Promise<ProfileSummary | undefined> {
  const sub = path.join(dir, `api-${pool}`);
  mkdirSync(sub, { recursive: true });
  const twin = await startTwin("profiled api", ENTRY.api, ctx.cores.server, ["--cpu-prof", `--cpu-prof-dir=${sub}`], ctx.stack.apiEnv);
  try {
    const url = `${twin.url}/api/me`;
    await (await fetch(url, { headers: { authorization: `Bearer ${ctx.hotToken}` } })).arrayBuffer();
    const result = await http(ctx, {
      url,
      ...(pool === "cold"
        ? { rotate: { pool: "cold", header: "authorization", prefix: "Bearer ", cursor: "profile-api" } }
        : { headers: { authorization: `Bearer ${ctx.hotToken}` } }),
      durationSec: ctx.settings.profileSec,
      warmupSec: 1,
      serverPids: [twin.pid],
    });
    countValid(ctx, `profile api ${pool}`, result);
    ctx.log(`profile: api ${pool} under --cpu-prof: ${fmtRun(result)}`);
  } finally {
    await twin.stop();
  }
  const file = newestProfile(sub);
  return file ? summarizeProfile(file, 15, WATCH) : undefined;
}

async function profileIdentity(ctx: Ctx, dir: string): Promise<ProfileSummary | undefined> {
  const sub = path.join(dir, "identity-get-session");
  mkdirSync(sub, { recursive: true });
  const twin = await startTwin("profiled identity", ENTRY.identity, ctx.cores.server, ["--cpu-prof", `--cpu-prof-dir=${sub}`], {
    ...process.env,
    NODE_ENV: "production",
    LOG_LEVEL: ctx.settings.logLevel,
    DATABASE_URL: ctx.db.url,
    AUTH_SECRET: ctx.stack.authSecret,
    BASE_URL: ctx.stack.baseUrl,
    RATE_LIMIT_IP_MAX: "100000000",
    RATE_LIMIT_ACCOUNT_MAX: "100000000",
    MAX_SESSIONS_PER_USER: "100000",
    SMTP_URL: BENCH_SMTP_URL,
    REQUIRE_EMAIL_VERIFICATION: "false",
  });
  try {
    const result = await http(ctx, {
      url: `${twin.url}/api/auth/get-session`,
      method: "POST",
      rotate: { pool: "cookies", header: "cookie", prefix: "", cursor: "profile-identity" },
      durationSec: ctx.settings.profileSec,
      warmupSec: 1,
      serverPids: [twin.pid],
    });
    countValid(ctx, "profile identity get-session", result);
    ctx.log(`profile: identity get-session under --cpu-prof: ${fmtRun(result)}`);
  } finally {
    await twin.stop();
  }
  const file = newestProfile(sub);
  return file ? summarizeProfile(file, 15, WATCH) : undefined;
}

export async function profileScenario(ctx: Ctx): Promise<ProfileResult> {
  const dir = path.join(ROOT, "artifacts", "bench", "profiles", new Date().toISOString().replace(/[:.]/g, "-"));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  ctx.log(`profile: --cpu-prof of the API cold path, hot path and identity get-session (files under ${path.relative(ROOT, dir)})`);
  pinDatabase(ctx.db, ctx.cores.server);
  const apiCold = await profileApi(ctx, dir, "cold");
  const apiHot = await profileApi(ctx, dir, "hot");
  const identityGetSession = await profileIdentity(ctx, dir);
  return {
    dir,
    ...(apiCold ? { apiCold } : {}),
    ...(apiHot ? { apiHot } : {}),
    ...(identityGetSession ? { identityGetSession } : {}),
  };
}
