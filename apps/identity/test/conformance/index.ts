import { drive as account } from "./account.js";
import { drive as admin } from "./admin.js";
import type { ConformanceDriver } from "./context.js";
import { drive as events } from "./events.js";
import { drive as oauth } from "./oauth.js";
import { drive as organizations } from "./organizations.js";
import { drive as passkeys } from "./passkeys.js";
import { drive as passwordless } from "./passwordless.js";
import { drive as twoFactor } from "./two-factor.js";
import { drive as webhooks } from "./webhooks.js";

/** Every feature folder's driver, run by route-conformance.test.ts after the account flows. */
export const DRIVERS: Record<string, ConformanceDriver> = {
  account,
  twoFactor,
  passkeys,
  passwordless,
  organizations,
  admin,
  oauth,
  events,
  webhooks,
};
