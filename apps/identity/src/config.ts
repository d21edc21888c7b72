import { createHash } from "node:crypto";
import { SESSION_COOKIE_SUFFIX } from "@app/contracts";
import {
  databaseSettingsShape,
  describeSettings,
  environmentSettingsShape,
  flag,
  loadConfig,
  loggingSettingsShape,
  logSettings,
  type MetricsSettings,
  metricsSettings,
  metricsSettingsShape,
  originList,
  refineServerLimits,
  refineSharedSettings,
  SERVICE_LIMITS,
  type ServerLimits,
  serverLimitsOf,
  serverSettingsShape,
  sharedSettingsShape,
  tokenSettings,
  tracingSettingsShape,
  trustProxySchema,
} from "@app/http-kit";
import { checkSmtpUrl } from "@app/mailer";
import { z } from "zod";
import { type FactorSettings, factorSettings, factorSettingsShape } from "./config-factors.js";
import { type OperationsSettings, operationsSettings, operationsSettingsShape } from "./config-operations.js";
import { rateLimitSettingsShape } from "./config-rate-limits.js";
import { parseSocialProviders, type SocialProviderConfig } from "./services/oidc/config.js";
import { type WebhookSettings, webhookSettings, webhookSettingsShape } from "./webhooks/config.js";

const MINUTE = 60 * 1000;
const DAY = 24 * 60 * MINUTE;

const int = (min: number) => z.coerce.number().int().min(min);

// Loose: the per-provider OIDC_<ID>_* variables have names only OIDC_PROVIDERS tells.
const schema = z
  .looseObject({
    ...environmentSettingsShape,
    ...serverSettingsShape({ port: 3001, limits: SERVICE_LIMITS }),
    ...loggingSettingsShape,
    ...tracingSettingsShape,
    ...databaseSettingsShape,
    ...factorSettingsShape,
    AUTH_SECRET: z.string({ error: "AUTH_SECRET is required" }).min(1, "AUTH_SECRET is required").meta({
      description: "encrypts the signing keys; at least 32 characters in production; changing it invalidates every JWT",
      docDefault: "`.data/secrets.json` under `pnpm start`",
    }),
    // BASE_URL, JWT_ISSUER/JWT_AUDIENCE, KEY_ACTIVATION_DELAY_MS and the verifiers'
    // JWKS_CACHE_MAX_AGE_MS/JWKS_COOLDOWN_MS: one definition with the API
    // (packages/http-kit/src/settings/token.ts), so a fresh key is never unknown to a verifier.
    ...sharedSettingsShape,
    CORS_ORIGINS: originList.meta({
      description: "comma-separated origins allowed with credentials (besides the base URL's)",
      docDefault: "`http://localhost:5173` outside production",
    }),
    CORS_EXPOSE_AUTH_HEADER: flag.default("true").describe("CORS exposes the `set-auth-jwt` response header to the allowed origins"),
    COOKIE_PREFIX: z
      .string()
      .regex(/^[\w-]+$/, "COOKIE_PREFIX may hold letters, digits, _ and -")
      .default("identity")
      .describe("the session cookie's name is `<prefix>.session_token`"),
    SESSION_TTL_DAYS: z.coerce
      .number()
      .positive()
      .max(400, "SESSION_TTL_DAYS must be at most 400")
      .default(7)
      .describe("session lifetime (slides when used in its second half)"),
    TRUST_PROXY: trustProxySchema.describe("Express `trust proxy`: `true`/`false`, a hop count, or names/CIDRs"),
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, "REDIS_URL must start with redis:// or rediss://")
      .optional()
      .describe("shares the rate limit counters of every instance (in memory per process when unset)"),
    RATE_LIMIT_REDIS_PREFIX: z.string().min(1).optional().meta({
      description: "key prefix of the rate limit counters in Redis",
      docDefault: "derived from the database's host, port and name",
    }),
    ...rateLimitSettingsShape,
    ...metricsSettingsShape,
    ...operationsSettingsShape,
    ...webhookSettingsShape,
    SMTP_URL: z
      .string()
      .optional()
      .transform((v) => (v?.trim() ? v.trim() : undefined))
      .superRefine((v, ctx) => {
        const problem = v === undefined ? undefined : checkSmtpUrl(v);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .meta({
        description:
          "`smtp://` or `smtps://`, credentials in the URL; required in production while verification is on; unset: mail routes answer 503",
        docDefault: "unset (a local catcher under `pnpm start`)",
      }),
    MAIL_FROM: z
      .string()
      .trim()
      .min(3)
      .max(320)
      .optional()
      .meta({ description: "the sender of every mail", docDefault: "`Accounts <no-reply@<base URL host>>`" }),
    MAIL_BUDGET_PER_HOUR: int(1)
      .default(5)
      .describe("mails one address receives per hour, whatever caused them; the rest are dropped ([limits](limits.md))"),
    // No default here: unset means true in production and false elsewhere (configFrom).
    REQUIRE_EMAIL_VERIFICATION: z.enum(["true", "false"], { error: "REQUIRE_EMAIL_VERIFICATION must be true or false" }).optional().meta({
      description:
        "sign-in of an unverified user answers 403 `email_not_verified` ([accounts](accounts.md)); true in production needs `SMTP_URL`",
      docDefault: "`true` in production, else `false`",
    }),
    MAX_SESSIONS_PER_USER: int(1).default(50).describe("the oldest sessions of a user beyond this many are deleted on sign-in"),
    KEY_ROTATION_DAYS: z.coerce
      .number()
      .min(0)
      .default(0)
      .describe("make a new signing key when the newest is this old (0: never; `pnpm keys:rotate` by hand)"),
    OAUTH_ACCESS_TOKEN_TTL: int(1)
      .max(24 * 60 * 60, "OAUTH_ACCESS_TOKEN_TTL must be at most 86400 (a day)")
      .default(3600)
      .describe(
        "lifetime in seconds of the access tokens (and ID tokens) the OAuth authorization server issues ([OAuth provider](oauth-provider.md)); a revoked app's JWTs last until then",
      ),
    HOUSEKEEPING_INTERVAL_MS: int(100)
      .default(10 * MINUTE)
      .describe("interval of session purge, key retirement and the rotation check"),
  })
  .superRefine((env, ctx) => {
    refineServerLimits(env, ctx);
    refineSharedSettings(env, ctx);
    for (const problem of parseSocialProviders(env, env.NODE_ENV === "production").problems) {
      ctx.addIssue({ code: "custom", path: [problem.variable], message: problem.message });
    }
    if (env.NODE_ENV === "production" && env.AUTH_SECRET.trim().length < 32) {
      ctx.addIssue({ code: "custom", path: ["AUTH_SECRET"], message: "AUTH_SECRET must be at least 32 characters in production" });
    }
    // Verification without mail would let nobody sign in: every new account waits for a link that never comes.
    if (env.NODE_ENV === "production" && requiresVerification(env) && env.SMTP_URL === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["SMTP_URL"],
        message:
          "SMTP_URL is required in production while REQUIRE_EMAIL_VERIFICATION is true (its default there): set SMTP_URL, or REQUIRE_EMAIL_VERIFICATION=false",
      });
    }
  });

/** The variables of identity for docs/configuration.md; the OIDC ones are read by pattern (services/oidc/config.ts). */
export const configVariables = describeSettings("identity", schema, [
  {
    name: "OIDC_PROVIDERS",
    default: "unset",
    description: "comma-separated sign-in provider ids ([sign-in providers](sign-in-providers.md))",
  },
  {
    name: "OIDC_<ID>_ISSUER / _CLIENT_ID / _CLIENT_SECRET / _SCOPES / _NAME",
    default: "scopes `openid email profile`",
    description: "one OpenID Connect provider, found by discovery; redirect URI `{BASE_URL}/api/auth/callback/<id>`",
  },
  { name: "GITHUB_CLIENT_ID / GITHUB_CLIENT_SECRET", default: "unset", description: "the GitHub preset (OAuth 2.0)" },
]);

/**
 * REQUIRE_EMAIL_VERIFICATION, true by default in production: there an unverified account gets no
 * session and no JWT, so whoever registers someone else's address first holds nothing
 * (docs/accounts.md). Outside production it stays false unless set, so `pnpm start` works without
 * a mail server.
 */
function requiresVerification(env: { NODE_ENV: string; REQUIRE_EMAIL_VERIFICATION?: "true" | "false" | undefined }): boolean {
  return (env.REQUIRE_EMAIL_VERIFICATION ?? (env.NODE_ENV === "production" ? "true" : "false")) === "true";
}

/** Identity service configuration, parsed once at start-up. */
export interface IdentityConfig {
  env: "development" | "production" | "test";
  host: string;
  port: number;
  databaseUrl: string;
  authSecret: string;
  baseUrl: string;
  corsOrigins: string[];
  exposeAuthHeader: boolean;
  cookieName: string;
  secureCookies: boolean;
  issuer: string;
  audience: string;
  /** `exp` - `iat` of the JWTs identity signs, in seconds (JWT_EXPIRES_IN). */
  jwtLifetimeSeconds: number;
  sessionTtlMs: number;
  trustProxy: boolean | number | string;
  /** Rate limits of sign-in and sign-up (shared through Redis when `redisUrl` is set). */
  rateLimits: RateLimitSettings;
  /** Limits of the mail-sending routes (per client IP and per address). */
  mailRateLimits: MailRateLimitSettings;
  /** Outgoing mail server (`smtp://` or `smtps://`, credentials in the URL); none: mail answers 503. */
  smtpUrl: string | undefined;
  /** From header of account mails. */
  mailFrom: string;
  /** Mails one address may receive per hour, whatever route caused them (services/mail-outbox.ts). */
  mailBudgetPerHour: number;
  /** Sign-in of an unverified email answers 403 `email_not_verified` (default: true in production). */
  requireEmailVerification: boolean;
  /** Oldest sessions of a user beyond this many are deleted on sign-in. */
  maxSessionsPerUser: number;
  /** Make a new signing key when the newest is this old (0: never; `pnpm keys:rotate` by hand). */
  keyRotationMs: number;
  /** How long a new key is published before it signs. */
  keyActivationDelayMs: number;
  /** Interval of session purge, key retirement and the rotation check. */
  housekeepingIntervalMs: number;
  /** Lifetime of the authorization server's access and ID tokens, in seconds (oauth-provider/). */
  oauthAccessTokenTtl: number;
  logLevel: string;
  logFormat: "json" | "pretty";
  /** Connection caps and timeouts of the server (docs/edge-limits.md). */
  limits: ServerLimits;
  /** Sign-in providers (OIDC_PROVIDERS, OIDC_<ID>_*, GITHUB_*): services/oidc/config.ts. */
  socialProviders: SocialProviderConfig[];
  /** Passkeys' relying party and the fresh-session age (config-factors.ts). */
  factors: FactorSettings;
  /** The `/metrics` listener (off unless METRICS_PORT is set). */
  metrics: MetricsSettings;
  /** The security event log's retention (config-operations.ts). */
  operations: OperationsSettings;
  /** Webhook delivery (webhooks/config.ts). */
  webhooks: WebhookSettings;
}

/**
 * Limits of the routes that send mail (request-password-reset, send-verification-email,
 * change-email): every request counts, per client IP and per address, in one window.
 */
export interface MailRateLimitSettings {
  ipMax: number;
  addressMax: number;
  windowMs: number;
}

/** Limits of the sign-in and sign-up routes. */
export interface RateLimitSettings {
  /** Requests per client IP per route and window. */
  ipMax: number;
  ipWindowMs: number;
  /** Failed attempts per account (normalised email) from one client IP per window; a success resets the count. */
  accountMax: number;
  accountWindowMs: number;
  /**
   * Failed attempts on an account from any address within `accountWindowMs` before its attempts
   * are slowed down: `delayMs`, doubling per further failure, at most `delayMaxMs`.
   */
  delayAfter: number;
  delayMs: number;
  delayMaxMs: number;
  /** Shared counters for every identity instance; in memory (per process) when absent. */
  redisUrl: string | undefined;
  /** Key prefix in Redis (default: derived from the database, so one deployment shares counters). */
  redisPrefix: string;
}

/**
 * `rl:<hash of the database host, port and name>:`: identity instances of one deployment (one
 * database) share their counters; another deployment (or test database) on the same Redis does
 * not. Credentials are not part of the hash, so rotating the database password keeps the counters.
 */
function defaultRedisPrefix(databaseUrl: string): string {
  let identity = databaseUrl;
  try {
    const url = new URL(databaseUrl);
    identity = `${url.hostname}:${url.port}${url.pathname}`;
  } catch {
    // not a URL: hash it as it is
  }
  return `rl:${createHash("sha256").update(identity).digest("hex").slice(0, 12)}:`;
}

/** Builds the config from an environment; pure, so tests can call it with a literal. */
export function configFrom(env: z.output<typeof schema>): IdentityConfig {
  const { baseUrl, issuer, audience } = tokenSettings(env);
  const origins = env.CORS_ORIGINS.length ? env.CORS_ORIGINS : env.NODE_ENV === "production" ? [] : ["http://localhost:5173"];
  const corsOrigins = [...new Set([...origins, new URL(baseUrl).origin])];
  return {
    env: env.NODE_ENV,
    host: env.HOST,
    port: env.PORT,
    databaseUrl: env.DATABASE_URL,
    authSecret: env.AUTH_SECRET,
    baseUrl,
    corsOrigins,
    exposeAuthHeader: env.CORS_EXPOSE_AUTH_HEADER === "true",
    cookieName: `${env.COOKIE_PREFIX}${SESSION_COOKIE_SUFFIX}`,
    secureCookies: baseUrl.startsWith("https:"),
    issuer,
    audience,
    jwtLifetimeSeconds: env.JWT_EXPIRES_IN,
    sessionTtlMs: env.SESSION_TTL_DAYS * DAY,
    trustProxy: env.TRUST_PROXY,
    rateLimits: {
      ipMax: env.RATE_LIMIT_IP_MAX,
      ipWindowMs: env.RATE_LIMIT_IP_WINDOW_MS,
      accountMax: env.RATE_LIMIT_ACCOUNT_MAX,
      accountWindowMs: env.RATE_LIMIT_ACCOUNT_WINDOW_MS,
      delayAfter: env.RATE_LIMIT_ACCOUNT_DELAY_AFTER,
      delayMs: env.RATE_LIMIT_ACCOUNT_DELAY_MS,
      delayMaxMs: env.RATE_LIMIT_ACCOUNT_DELAY_MAX_MS,
      redisUrl: env.REDIS_URL,
      redisPrefix: env.RATE_LIMIT_REDIS_PREFIX ?? defaultRedisPrefix(env.DATABASE_URL),
    },
    mailRateLimits: {
      ipMax: env.RATE_LIMIT_MAIL_IP_MAX,
      addressMax: env.RATE_LIMIT_MAIL_ADDRESS_MAX,
      windowMs: env.RATE_LIMIT_MAIL_WINDOW_MS,
    },
    smtpUrl: env.SMTP_URL,
    mailFrom: env.MAIL_FROM ?? `Accounts <no-reply@${new URL(baseUrl).hostname}>`,
    mailBudgetPerHour: env.MAIL_BUDGET_PER_HOUR,
    requireEmailVerification: requiresVerification(env),
    maxSessionsPerUser: env.MAX_SESSIONS_PER_USER,
    keyRotationMs: env.KEY_ROTATION_DAYS * DAY,
    keyActivationDelayMs: env.KEY_ACTIVATION_DELAY_MS,
    housekeepingIntervalMs: env.HOUSEKEEPING_INTERVAL_MS,
    oauthAccessTokenTtl: env.OAUTH_ACCESS_TOKEN_TTL,
    logLevel: env.LOG_LEVEL,
    logFormat: logSettings(env).format,
    limits: serverLimitsOf(env),
    socialProviders: parseSocialProviders(env, env.NODE_ENV === "production").providers,
    factors: factorSettings(env, baseUrl, corsOrigins),
    metrics: metricsSettings(env),
    operations: operationsSettings(env),
    webhooks: webhookSettings(env, env.NODE_ENV),
  };
}

/** Parses `process.env`; exits with a clear message when it is invalid. */
export function loadIdentityConfig(env: NodeJS.ProcessEnv = process.env): IdentityConfig {
  return configFrom(loadConfig(schema, env, "identity"));
}

/** Parses a partial environment for tests (defaults filled in). */
export function testConfig(overrides: Record<string, string>): IdentityConfig {
  return configFrom(schema.parse({ NODE_ENV: "test", ...overrides }));
}
