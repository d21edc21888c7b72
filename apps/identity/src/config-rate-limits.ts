import { z } from "zod";

const MINUTE = 60 * 1000;
const int = (min: number) => z.coerce.number().int().min(min);

/**
 * The variables of the sign-in, sign-up and mail limits (middleware/rate-limits.ts,
 * docs/limits.md), spread into identity's schema in config.ts.
 */
export const rateLimitSettingsShape = {
  RATE_LIMIT_IP_MAX: int(1).default(100).describe("sign-in and sign-up requests per client IP per route and window"),
  RATE_LIMIT_IP_WINDOW_MS: int(100)
    .default(15 * MINUTE)
    .describe("the window of RATE_LIMIT_IP_MAX"),
  RATE_LIMIT_ACCOUNT_MAX: int(1).default(10).describe("failed attempts per account from one client IP per window"),
  RATE_LIMIT_ACCOUNT_WINDOW_MS: int(100)
    .default(15 * MINUTE)
    .describe("the window of RATE_LIMIT_ACCOUNT_MAX and of the slow-down"),
  RATE_LIMIT_ACCOUNT_DELAY_AFTER: int(0)
    .default(5)
    .describe("failed attempts on an account (any address) before its attempts are slowed down"),
  RATE_LIMIT_ACCOUNT_DELAY_MS: int(0).default(500).describe("the first slow-down delay, doubling per further failure"),
  RATE_LIMIT_ACCOUNT_DELAY_MAX_MS: int(0)
    .max(30_000, "RATE_LIMIT_ACCOUNT_DELAY_MAX_MS must be at most 30000 (a longer wait locks the owner out in practice)")
    .default(4_000)
    .describe("the longest slow-down delay (at most 30000)"),
  RATE_LIMIT_MAIL_IP_MAX: int(1).default(20).describe("mail-sending requests per client IP per window"),
  RATE_LIMIT_MAIL_ADDRESS_MAX: int(1).default(5).describe("mail-sending requests per address per window"),
  RATE_LIMIT_MAIL_WINDOW_MS: int(100)
    .default(60 * MINUTE)
    .describe("the window of the mail-sending limits"),
};
