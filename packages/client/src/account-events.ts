import {
  type AccountEventsResponse,
  type AdminEventsResponse,
  accountEventsResponse,
  adminEventsResponse,
  type SecurityEventOutcome,
  type SecurityEventType,
} from "@app/contracts";
import type { Http } from "./http.js";
import { identityJson } from "./sign-in.js";

/** A page request: the `nextCursor` of the page before (none: the newest page) and its size (at most 100). */
export interface EventPageRequest {
  cursor?: string | null | undefined;
  limit?: number | undefined;
}

/** The admins' filters: all optional, combined with AND; `type` one type or several (any of them). */
export interface AdminEventFilters extends EventPageRequest {
  userId?: string | undefined;
  type?: SecurityEventType | readonly SecurityEventType[] | undefined;
  outcome?: SecurityEventOutcome | undefined;
  /** From this moment on (ISO 8601 date or date-time). */
  from?: string | undefined;
  /** Before this moment (a date alone: to the end of that day, UTC). */
  to?: string | undefined;
  ip?: string | undefined;
  /** The admin who acted. */
  actorId?: string | undefined;
}

/**
 * The security event log (apps/identity/src/security-events/), called with the session cookie:
 * the user's own events, newest first, and, for admins, everyone's with filters. A page ends with
 * `nextCursor` (null on the last); pass it back for the next.
 */
export interface AccountEventsApi {
  /** A page of the signed-in user's own events (GET /api/auth/account-events). */
  list(page?: EventPageRequest): Promise<AccountEventsResponse>;
  /** A page of every user's events matching the filters (GET /api/auth/admin/events); 403 `forbidden` for a non-admin. */
  adminList(filters?: AdminEventFilters): Promise<AdminEventsResponse>;
}

/** The query of a request: strings, a list repeating its key, nothing for what is unset. */
function queryOf(values: object): Record<string, string | readonly string[] | undefined> {
  const query: Record<string, string | readonly string[] | undefined> = {};
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined || value === null || value === "") continue;
    query[key] = Array.isArray(value) ? value.map(String) : String(value);
  }
  return query;
}

/** Builds the {@link AccountEventsApi} over a transport. */
export function accountEventsApi(http: Http): AccountEventsApi {
  return {
    list: (page = {}) => identityJson(http, accountEventsResponse, "/account-events", { query: queryOf(page) }),
    adminList: (filters = {}) => identityJson(http, adminEventsResponse, "/admin/events", { query: queryOf(filters) }),
  };
}
