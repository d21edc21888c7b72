import { AUTH_BASE_PATH, accountEventsQuery, accountEventsResponse, adminEventsQuery, adminEventsResponse } from "@app/contracts";
import { type AnyRoute, defineRoute } from "@app/http-kit";
import { adminGuard } from "../admin/guard.js";
import { AdminRoles } from "../admin/roles.js";
import type { FeatureDeps } from "../features.js";
import { signedInUser } from "../middleware/guards.js";
import { eventReadLimits } from "./limits.js";
import { EventLog } from "./log.js";

const TAG = "security-events";

/**
 * The security event log's routes (docs/operations.md "Security event log"): the user's own
 * events (Account → Security activity) and the admins' query over everyone's, both newest first
 * in pages of `SECURITY_EVENTS_PAGE_SIZE` (`limit` up to 100) with an opaque `cursor`. The events
 * themselves are written by record.ts in the transaction of each action they record.
 */
export function securityEventRoutes(features: FeatureDeps): AnyRoute[] {
  const { guards, prisma, now, logger } = features;
  const log = new EventLog(prisma);
  const own = eventReadLimits({ now, logger, stores: features.limiterStores, scope: "account-events" });
  const admins = eventReadLimits({ now, logger, stores: features.limiterStores, scope: "admin-events" });
  const admin = adminGuard(new AdminRoles(prisma));
  return [
    defineRoute({
      method: "get",
      path: `${AUTH_BASE_PATH}/account-events`,
      tag: TAG,
      summary: "The signed-in user's security events, newest first: sign-ins, changes, admins' actions on the account",
      query: accountEventsQuery,
      response: accountEventsResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, own.perIp, guards.cookies, guards.signedIn, own.perUser],
      handler: ({ query, res }) => log.forUser(signedInUser(res).user.id, query),
    }),
    defineRoute({
      method: "get",
      path: `${AUTH_BASE_PATH}/admin/events`,
      tag: TAG,
      summary: "Every user's security events (and those of no user), newest first, by user, type, outcome, time, IP or acting admin",
      query: adminEventsQuery,
      response: adminEventsResponse,
      reply: "json",
      guards: [guards.origin, guards.noStore, admins.perIp, guards.cookies, guards.signedIn, admin, admins.perUser],
      handler: ({ query }) => log.forAdmin(query),
    }),
  ];
}
