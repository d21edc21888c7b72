import { z } from "zod";

/**
 * The security event types (apps/identity/src/security-events/), in snake case as
 * GET /api/auth/account-events names them.
 */
export const SECURITY_EVENT_TYPES = [
  "sign_up",
  "sign_in",
  "sign_in_failed",
  "sign_out",
  "session_revoked",
  "password_changed",
  "password_reset",
  "email_changed",
  "email_verified",
  "two_factor_enabled",
  "two_factor_disabled",
  "passkey_added",
  "passkey_removed",
  "account_deleted",
  "user_banned",
  "impersonation_started",
  "impersonation_stopped",
  "role_changed",
  "oauth_consent_granted",
  "oauth_consent_revoked",
  "key_rotated",
] as const;

/** One security event type. */
export const securityEventType = z.enum(SECURITY_EVENT_TYPES);
export type SecurityEventType = z.infer<typeof securityEventType>;

/** Whether the action an event records succeeded. */
export const securityEventOutcome = z.enum(["success", "failure"]);
export type SecurityEventOutcome = z.infer<typeof securityEventOutcome>;

/** Events on one page of the event log unless `limit` says otherwise. */
export const SECURITY_EVENTS_PAGE_SIZE = 50;
/** The largest page `limit` asks for. */
export const SECURITY_EVENTS_MAX_LIMIT = 100;

/** `?cursor=`: the `nextCursor` of the page before, opaque (a malformed one answers 400 `bad_request`). */
const cursorField = z.string().min(1, "cursor is empty").max(200, "cursor is too long");
const limitField = z.coerce
  .number({ error: "limit must be a number" })
  .int("limit must be an integer")
  .min(1, "limit must be at least 1")
  .max(SECURITY_EVENTS_MAX_LIMIT, `limit must be at most ${SECURITY_EVENTS_MAX_LIMIT}`);

/** Query of GET /api/auth/account-events: a page of the user's own events, newest first. */
export const accountEventsQuery = z.object({
  cursor: cursorField.optional(),
  limit: limitField.optional(),
});
export type AccountEventsQuery = z.infer<typeof accountEventsQuery>;

/** Non-secret facts of an event (a role, a client id and its scopes, a key id, a reason). */
export const securityEventDetail = z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]));

/** One event as the user reads it. */
export const securityEventSchema = z.object({
  id: z.string(),
  type: securityEventType,
  createdAt: z.string().describe("ISO-8601 timestamp"),
  /** The client's address as identity saw it (TRUST_PROXY), or null (no request: a key rotation, housekeeping). */
  ip: z.string().nullable(),
  /** The client's User-Agent header (at most 512 characters), or null. */
  userAgent: z.string().nullable(),
  outcome: securityEventOutcome,
  /** The admin who acted on the account, when it was not the user. */
  actorId: z.string().optional(),
  /** How: a sign-in method (password, provider, passkey, magic-link, email-otp) or a second factor (totp, otp, backup-code). */
  method: z.string().optional(),
  detail: securityEventDetail.optional(),
});
export type SecurityEventView = z.infer<typeof securityEventSchema>;

/** GET /api/auth/account-events: a page of events and the cursor of the next (null on the last page). */
export const accountEventsResponse = z.object({
  events: z.array(securityEventSchema),
  nextCursor: z.string().nullable(),
});
export type AccountEventsResponse = z.infer<typeof accountEventsResponse>;

/** One or several event types: repeated (`type=a&type=b`) or comma-separated (`type=a,b`). */
const typesField = z.preprocess(
  (value) => (typeof value === "string" ? value.split(",") : Array.isArray(value) ? value.flatMap((v) => String(v).split(",")) : value),
  z
    .array(securityEventType, { error: `type must be one of ${SECURITY_EVENT_TYPES.join(", ")}` })
    .min(1)
    .max(SECURITY_EVENT_TYPES.length),
);
/** The earliest and latest instants PostgreSQL's timestamptz and an ISO 8601 string both hold: years 1 to 9999 (UTC). */
export const STORABLE_TIME_MIN_MS = Date.parse("0001-01-01T00:00:00.000Z");
export const STORABLE_TIME_MAX_MS = Date.parse("9999-12-31T23:59:59.999Z");

/** Whether an instant (ms since the epoch) lies in years 1 to 9999, so a query can compare a column with it. */
export function isStorableTime(ms: number): boolean {
  return Number.isFinite(ms) && ms >= STORABLE_TIME_MIN_MS && ms <= STORABLE_TIME_MAX_MS;
}

/** A moment: an ISO 8601 date-time with its offset, or a date (UTC midnight), in years 1 to 9999. */
const momentField = (name: string) =>
  z
    .union([z.iso.datetime({ offset: true }), z.iso.date()], { error: `${name} must be an ISO 8601 date or date-time` })
    .refine((value) => isStorableTime(Date.parse(value)), `${name} must lie between the years 1 and 9999`);
const idField = (name: string) => z.string().min(1, `${name} is empty`).max(100, `${name} is too long`);

/**
 * Query of GET /api/auth/admin/events: every user's events (and those of no user), newest first,
 * filtered by user, type, outcome, time (`from` inclusive; `to` exclusive, a date alone meaning
 * up to the end of that day), client address and acting admin. An unknown parameter answers 400,
 * so a misspelt filter never widens the answer to every event.
 */
export const adminEventsQuery = z.strictObject({
  cursor: cursorField.optional(),
  limit: limitField.optional(),
  userId: idField("userId").optional(),
  type: typesField.optional(),
  outcome: securityEventOutcome.optional(),
  from: momentField("from").optional(),
  to: momentField("to").optional(),
  ip: z.string().min(1, "ip is empty").max(64, "ip is too long").optional(),
  actorId: idField("actorId").optional(),
});
export type AdminEventsQuery = z.infer<typeof adminEventsQuery>;

/** One event as an admin reads it: with the account it is about (null: none, such as an unknown address or a key). */
export const adminEventSchema = securityEventSchema.extend({ userId: z.string().nullable() });
export type AdminEventView = z.infer<typeof adminEventSchema>;

/** GET /api/auth/admin/events: a page of events and the cursor of the next (null on the last page). */
export const adminEventsResponse = z.object({
  events: z.array(adminEventSchema),
  nextCursor: z.string().nullable(),
});
export type AdminEventsResponse = z.infer<typeof adminEventsResponse>;
