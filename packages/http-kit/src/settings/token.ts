import { JWT_LIFETIME_SECONDS } from "@app/contracts";
import { z } from "zod";

/**
 * The token settings both services read (apps/identity/src/config.ts and apps/api/src/config.ts),
 * one fragment so an operator sets each once for the whole deployment and the two services cannot
 * disagree about defaults or rules.
 */

/** The verifiers' key set cache max age: the contract's 10 minutes (packages/auth-verify). */
export const DEFAULT_JWKS_CACHE_MAX_AGE_MS = 10 * 60 * 1000;
/** The verifiers' refetch cooldown for an unknown `kid`: the contract's 30 seconds. */
export const DEFAULT_JWKS_COOLDOWN_MS = 30_000;
/**
 * How long identity publishes a new key before it signs: a verifier that cached the key set just
 * before the key appeared refetches within max age + cooldown, so it knows the key before it
 * meets a token signed with it.
 */
export const DEFAULT_KEY_ACTIVATION_DELAY_MS = DEFAULT_JWKS_CACHE_MAX_AGE_MS + DEFAULT_JWKS_COOLDOWN_MS;
/** The public base URL outside production when BASE_URL is not set (the local gateway). */
export const DEFAULT_BASE_URL = "http://localhost:3000";

/** The shortest JWT lifetime JWT_EXPIRES_IN accepts: clients fetch a new token at least this often. */
export const MIN_JWT_LIFETIME_SECONDS = 60;

const DURATION_UNITS: Record<string, number> = { "": 1, s: 1, m: 60, h: 3_600, d: 86_400 };

/**
 * JWT_EXPIRES_IN in seconds: a whole number of seconds, or one with a unit (`15m`, `12h`, `7d`),
 * from {@link MIN_JWT_LIFETIME_SECONDS} to the contract's 30 days (JWT_LIFETIME_SECONDS), which
 * verifiers accept as the longest lifetime and key retirement waits out.
 */
const jwtLifetimeSetting = z
  .string()
  .trim()
  .regex(/^\d{1,9}[smhd]?$/, "JWT_EXPIRES_IN must be seconds or a duration such as 900, 15m, 12h or 7d")
  .transform((value) => {
    const unit = /[smhd]$/.test(value) ? value.slice(-1) : "";
    return Number(unit ? value.slice(0, -1) : value) * (DURATION_UNITS[unit] ?? 1);
  })
  .pipe(
    z
      .number()
      .min(MIN_JWT_LIFETIME_SECONDS, `JWT_EXPIRES_IN must be at least ${MIN_JWT_LIFETIME_SECONDS} seconds`)
      .max(JWT_LIFETIME_SECONDS, "JWT_EXPIRES_IN must be at most 30d (the contract's lifetime, which verifiers accept)"),
  )
  .default(JWT_LIFETIME_SECONDS);

const claim = (name: string) => z.string().trim().min(1, `${name} must not be empty (leave it unset to use BASE_URL)`).optional();

/** The public base URL, also read by the gateway (the host its development mailbox answers on). */
export const baseUrlSetting = z.url({ error: "BASE_URL must be an absolute URL" }).optional().meta({
  description: "public base URL (the gateway's); JWT `iss` and `aud`; https makes cookies `Secure`; mailed links; required in production",
  docDefault: "`http://localhost:3000`",
});

/** The shared token variables, to spread into each service's `z.object({...})`. */
export const sharedSettingsShape = {
  BASE_URL: baseUrlSetting,
  JWT_ISSUER: claim("JWT_ISSUER").meta({
    description: "the JWT's `iss`, signed by identity and required by the API",
    docDefault: "`BASE_URL`",
  }),
  JWT_AUDIENCE: claim("JWT_AUDIENCE").meta({
    description: "the JWT's `aud`, signed by identity and required by the API",
    docDefault: "`BASE_URL`",
  }),
  JWT_EXPIRES_IN: jwtLifetimeSetting.meta({
    description:
      "lifetime of the JWTs identity signs: seconds, or `15m`, `12h`, `7d` up to `30d`; an issued JWT outlives a ban or sign-out until then ([admin](admin.md))",
    docDefault: "`30d`",
  }),
  JWKS_CACHE_MAX_AGE_MS: z.coerce
    .number()
    .int()
    .min(1)
    .default(DEFAULT_JWKS_CACHE_MAX_AGE_MS)
    .describe("the verifiers' key set cache max age (contract value)"),
  JWKS_COOLDOWN_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(DEFAULT_JWKS_COOLDOWN_MS)
    .describe("the verifiers' refetch cooldown for an unknown `kid` (contract value)"),
  KEY_ACTIVATION_DELAY_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(DEFAULT_KEY_ACTIVATION_DELAY_MS)
    .describe("a new key is published this long before it signs; at least max age + cooldown, or neither service starts"),
};

/** The parsed shared variables (and NODE_ENV, which the rules read). */
export type SharedSettingsEnv = z.output<z.ZodObject<typeof sharedSettingsShape>> & { NODE_ENV: string };

/**
 * The rules across the shared variables, for each service's `superRefine`: BASE_URL is required
 * in production (it is the JWT issuer and audience and decides the cookie's Secure flag), and a
 * new key must be published at least one verifier refetch (max age + cooldown) before it signs.
 */
export function refineSharedSettings(env: SharedSettingsEnv, ctx: z.RefinementCtx): void {
  if (env.NODE_ENV === "production" && !env.BASE_URL) {
    ctx.addIssue({
      code: "custom",
      path: ["BASE_URL"],
      message: "BASE_URL is required in production (JWT issuer and audience, cookie Secure flag)",
    });
  }
  const refetch = env.JWKS_CACHE_MAX_AGE_MS + env.JWKS_COOLDOWN_MS;
  if (env.KEY_ACTIVATION_DELAY_MS < refetch) {
    ctx.addIssue({
      code: "custom",
      path: ["KEY_ACTIVATION_DELAY_MS"],
      message:
        `KEY_ACTIVATION_DELAY_MS (${env.KEY_ACTIVATION_DELAY_MS}) must be at least JWKS_CACHE_MAX_AGE_MS + JWKS_COOLDOWN_MS ` +
        `(${env.JWKS_CACHE_MAX_AGE_MS} + ${env.JWKS_COOLDOWN_MS} = ${refetch}), or verifiers refuse tokens of a fresh key; ` +
        "give identity and API the same three values",
    });
  }
}

/** Public base URL (no trailing slash), JWT issuer and audience, derived alike in both services. */
export function tokenSettings(env: Pick<SharedSettingsEnv, "BASE_URL" | "JWT_ISSUER" | "JWT_AUDIENCE">): {
  baseUrl: string;
  issuer: string;
  audience: string;
} {
  const baseUrl = (env.BASE_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  return { baseUrl, issuer: env.JWT_ISSUER ?? baseUrl, audience: env.JWT_AUDIENCE ?? baseUrl };
}
