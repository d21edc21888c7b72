import { originList } from "@app/http-kit";
import { z } from "zod";

/**
 * The variables of second factors, passkeys and fresh-session checks (docs/accounts.md), spread
 * into identity's schema in config.ts.
 */
export const factorSettingsShape = {
  PASSKEY_RP_ID: z
    .string()
    .trim()
    .regex(/^[a-z0-9.-]+$/i, "PASSKEY_RP_ID is a host name like example.com (no scheme, no port)")
    .optional()
    .meta({ description: "the WebAuthn relying party id passkeys are bound to", docDefault: "the host of `BASE_URL`" }),
  PASSKEY_ORIGINS: originList.meta({
    description: "comma-separated origins a passkey ceremony may come from",
    docDefault: "the base URL's origin and `CORS_ORIGINS`",
  }),
  DELETE_FRESH_AGE: z.coerce
    .number()
    .int()
    .min(0)
    .default(24 * 60 * 60)
    .describe("seconds since sign-in within which a session may delete an account that has no password without a mailed confirmation"),
};

/** The parsed factor settings, as configFrom hands them on. */
export interface FactorSettings {
  /** The WebAuthn relying party id. */
  passkeyRpId: string;
  /** Origins a WebAuthn ceremony may come from. */
  passkeyOrigins: string[];
  /** A session younger than this may delete a password-less account without mail (ms). */
  deleteFreshAgeMs: number;
}

/** Builds the factor settings from the parsed environment and the base URL and CORS origins. */
export function factorSettings(
  env: { PASSKEY_RP_ID?: string | undefined; PASSKEY_ORIGINS: string[]; DELETE_FRESH_AGE: number },
  baseUrl: string,
  corsOrigins: string[],
): FactorSettings {
  return {
    passkeyRpId: env.PASSKEY_RP_ID ?? new URL(baseUrl).hostname,
    passkeyOrigins: env.PASSKEY_ORIGINS.length ? env.PASSKEY_ORIGINS : corsOrigins,
    deleteFreshAgeMs: env.DELETE_FRESH_AGE * 1000,
  };
}
