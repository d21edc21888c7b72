import { z } from "zod";

// The webhook endpoints' wire (apps/identity/src/webhooks/): /api/auth/admin/webhooks, and the
// messages identity sends, signed per the Standard Webhooks specification.

/** The events identity sends (docs/operations.md#webhooks). */
export const WEBHOOK_EVENT_TYPES = [
  "user.created",
  "user.updated",
  "user.deleted",
  "session.created",
  "session.revoked",
  "organization.created",
  "organization.updated",
  "organization.deleted",
  "organization.member_added",
  "organization.member_updated",
  "organization.member_removed",
] as const;

/** One webhook event type. */
export const webhookEventType = z.enum(WEBHOOK_EVENT_TYPES, { error: `events must be among ${WEBHOOK_EVENT_TYPES.join(", ")}` });
export type WebhookEventType = z.infer<typeof webhookEventType>;

/** Endpoints one deployment holds at most: every event is sent to each, so they are few. */
export const WEBHOOK_MAX_ENDPOINTS = 20;
/** The longest endpoint URL. */
export const WEBHOOK_URL_MAX_LENGTH = 2048;
/** Deliveries on one page of an endpoint's log unless `limit` says otherwise. */
export const WEBHOOK_DELIVERIES_PAGE_SIZE = 50;
/** The largest page `limit` asks for. */
export const WEBHOOK_DELIVERIES_MAX_LIMIT = 100;

/** Body of POST /api/auth/admin/webhooks: where to send and which events (at least one). */
export const createWebhookBody = z.strictObject({
  url: z
    .string({ error: "url is required" })
    .trim()
    .min(1, "url is required")
    .max(WEBHOOK_URL_MAX_LENGTH, `url must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`),
  events: z
    .array(webhookEventType, { error: "events must be a list of event types" })
    .min(1, "events must name at least one event type")
    .max(WEBHOOK_EVENT_TYPES.length * 2, "events names too many event types"),
});
export type CreateWebhookBody = z.infer<typeof createWebhookBody>;

/** One endpoint as GET lists it: never its secret. */
export const webhookEndpointSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(webhookEventType),
  createdAt: z.string().describe("ISO-8601 timestamp"),
  /** The admin who registered it (null once that account is gone). */
  createdBy: z.string().nullable(),
});
export type WebhookEndpointView = z.infer<typeof webhookEndpointSchema>;

/** POST /api/auth/admin/webhooks: the endpoint with its signing secret, shown this once. */
export const createdWebhookEndpointSchema = webhookEndpointSchema.extend({
  secret: z.string().regex(/^whsec_[A-Za-z0-9+/]+=*$/, "a Standard Webhooks secret"),
});
export type CreatedWebhookEndpoint = z.infer<typeof createdWebhookEndpointSchema>;

/** GET /api/auth/admin/webhooks: every endpoint, newest first. */
export const webhookEndpointsResponse = z.object({ endpoints: z.array(webhookEndpointSchema) });
export type WebhookEndpointsResponse = z.infer<typeof webhookEndpointsResponse>;

const idField = (name: string) => z.string().min(1, `${name} is empty`).max(100, `${name} is too long`);

/** `:id` of an endpoint. */
export const webhookEndpointParams = z.strictObject({ id: idField("id") });
/** `:id/deliveries/:deliveryId`. */
export const webhookDeliveryParams = z.strictObject({ id: idField("id"), deliveryId: idField("deliveryId") });

/** Query of GET /api/auth/admin/webhooks/:id/deliveries: a page of the log, newest first. */
export const webhookDeliveriesQuery = z.strictObject({
  cursor: z.string().min(1, "cursor is empty").max(200, "cursor is too long").optional(),
  limit: z.coerce
    .number({ error: "limit must be a number" })
    .int("limit must be an integer")
    .min(1, "limit must be at least 1")
    .max(WEBHOOK_DELIVERIES_MAX_LIMIT, `limit must be at most ${WEBHOOK_DELIVERIES_MAX_LIMIT}`)
    .optional(),
});
export type WebhookDeliveriesQuery = z.infer<typeof webhookDeliveriesQuery>;

/**
 * Where a delivery is: `pending` (an attempt is queued for `nextAttemptAt`), `sending` (a worker
 * holds it), `succeeded` (the endpoint answered 2xx) or `failed` (no 2xx within the retry window).
 */
export const webhookDeliveryState = z.enum(["pending", "sending", "succeeded", "failed"]);
export type WebhookDeliveryState = z.infer<typeof webhookDeliveryState>;

/** One message's delivery to one endpoint, as the log shows it. */
export const webhookDeliverySchema = z.object({
  id: z.string(),
  /** The message's `webhook-id`, the same on every attempt. */
  messageId: z.string(),
  eventType: z.string(),
  state: webhookDeliveryState,
  attempts: z.number().int(),
  /** The HTTP status of the last attempt (null: no answer, such as a timeout or a refused URL). */
  lastStatus: z.number().int().nullable(),
  /** Why the last attempt failed, in a sentence (never the endpoint's answer body). */
  lastError: z.string().nullable(),
  lastAttemptAt: z.string().nullable(),
  nextAttemptAt: z.string().nullable(),
  deliveredAt: z.string().nullable(),
  createdAt: z.string(),
});
export type WebhookDeliveryView = z.infer<typeof webhookDeliverySchema>;

/** GET /api/auth/admin/webhooks/:id/deliveries: a page and the cursor of the next (null on the last). */
export const webhookDeliveriesResponse = z.object({
  deliveries: z.array(webhookDeliverySchema),
  nextCursor: z.string().nullable(),
});
export type WebhookDeliveriesResponse = z.infer<typeof webhookDeliveriesResponse>;

/** DELETE /api/auth/admin/webhooks/:id. */
export const webhookDeletedResponse = z.object({ success: z.literal(true) });

/**
 * The body of every webhook request (Standard Webhooks' payload shape); `data` never holds a
 * secret, token or password.
 */
export const webhookPayloadSchema = z.object({
  type: webhookEventType,
  timestamp: z.string().describe("ISO-8601 time of the event"),
  data: z.record(z.string(), z.unknown()),
});
export type WebhookPayload = z.infer<typeof webhookPayloadSchema>;
