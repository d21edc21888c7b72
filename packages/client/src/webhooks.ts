import {
  type CreatedWebhookEndpoint,
  type CreateWebhookBody,
  createdWebhookEndpointSchema,
  type WebhookDeliveriesQuery,
  type WebhookDeliveriesResponse,
  type WebhookDeliveryView,
  type WebhookEndpointView,
  webhookDeletedResponse,
  webhookDeliveriesResponse,
  webhookDeliverySchema,
  webhookEndpointsResponse,
} from "@app/contracts";
import { errorFromResponse } from "./errors.js";
import { type Http, readJson } from "./http.js";
import { identityJson } from "./sign-in.js";

/**
 * Admins' webhook endpoints and their delivery logs (`/api/auth/admin/webhooks`, with the session
 * cookie): only admins may call them; anyone else gets 403 `forbidden`. Deliveries are signed per
 * the Standard Webhooks specification with the secret {@link WebhookAdminApi.create} answers once.
 */
export interface WebhookAdminApi {
  /** Every endpoint, newest first (never a secret). */
  list(): Promise<WebhookEndpointView[]>;
  /**
   * Registers an endpoint for some events. The answer's `secret` (`whsec_…`) is shown this once:
   * the receiver verifies signatures with it. 400 for an unknown event or a URL the outbound
   * policy refuses; 409 `conflict` at the endpoint cap.
   */
  create(body: CreateWebhookBody): Promise<CreatedWebhookEndpoint>;
  /** Deletes an endpoint with its delivery log. */
  remove(id: string): Promise<void>;
  /** A page of an endpoint's delivery log, newest first; pass `nextCursor` for the next. */
  deliveries(id: string, query?: WebhookDeliveriesQuery): Promise<WebhookDeliveriesResponse>;
  /** Sends a delivery again now, with the same `webhook-id` (409 while an attempt is in flight). */
  retry(id: string, deliveryId: string): Promise<WebhookDeliveryView>;
}

const BASE = "/admin/webhooks";
const enc = encodeURIComponent;

/** Builds the {@link WebhookAdminApi} over a transport. */
export function webhookAdminApi(http: Http): WebhookAdminApi {
  return {
    list: async () => (await identityJson(http, webhookEndpointsResponse, BASE)).endpoints,
    create: (body) => identityJson(http, createdWebhookEndpointSchema, BASE, { body }),
    async remove(id) {
      const response = await http.identity(`${BASE}/${enc(id)}`, { method: "DELETE", headers: { accept: "application/json" } });
      if (!response.ok) {
        const error = await errorFromResponse(response);
        if (error.status === 401 && error.code === "unauthorized") http.endSession();
        throw error;
      }
      await readJson(response, webhookDeletedResponse);
    },
    deliveries: (id, query = {}) =>
      identityJson(http, webhookDeliveriesResponse, `${BASE}/${enc(id)}/deliveries`, {
        query: { cursor: query.cursor, limit: query.limit === undefined ? undefined : String(query.limit) },
      }),
    retry: (id, deliveryId) =>
      identityJson(http, webhookDeliverySchema, `${BASE}/${enc(id)}/deliveries/${enc(deliveryId)}/retry`, { body: {} }),
  };
}
