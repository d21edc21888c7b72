import type { PrismaClient } from "@app/db";
import type { Logger } from "pino";
import type { IdentityConfig } from "./config.js";
import type { IdentityGuards } from "./middleware/guards.js";
import type { CookieSettings } from "./middleware/session-cookie.js";
import type { LimiterStores } from "./middleware/window-limits.js";
import type { IdentityService } from "./services/identity.js";
import type { SignInFinisher } from "./sign-in/finish.js";

/** What a feature folder's routes are built from (app.ts builds it once). */
export interface FeatureDeps {
  config: IdentityConfig;
  prisma: PrismaClient;
  logger: Logger;
  now: () => number;
  service: IdentityService;
  guards: IdentityGuards;
  /** Where the feature routes' limiters count: Redis shared with sign-in's, or memory (middleware/window-limits.ts). */
  limiterStores: LimiterStores;
  cookie: CookieSettings;
  /** Ends every sign-in method with the same session cookie (sign-in/finish.ts). */
  signIns: SignInFinisher;
}
