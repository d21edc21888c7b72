import {
  AUTH_BASE_PATH,
  createdWebhookEndpointSchema,
  createWebhookBody,
  webhookDeletedResponse,
  webhookDeliveriesQuery,
  webhookDeliveriesResponse,
  webhookDeliveryParams,
  webhookDeliverySchema,
  webhookEndpointParams,
  webhookEndpointsResponse,
} from "@app/contracts";
import { type AnyRoute, defineRoute } from "@app/http-kit";
import { adminGuard } from "../admin/guard.js";
import { adminLimits } from "../admin/limits.js";
import { AdminRoles } from "../admin/roles.js";
import type { FeatureDeps } from "../features.js";
import { signedInUser } from "../middleware/guards.js";
import { WebhookEndpoints } from "./endpoints.js";
import { AttemptQueue } from "./queue.js";
import { WebhookSecrets } from "./secrets.js";
import { webhookUrlPolicy } from "./send.js";

const TAG = "webhooks";
const BASE = `${AUTH_BASE_PATH}/admin/webhooks`;

/**
 * The admin's webhook routes (`/api/auth/admin/webhooks`, docs/operations.md#webhooks): register
 * an endpoint (its `whsec_` secret answered this once), list and delete endpoints, read an
 * endpoint's delivery log and send a delivery again. Admins only (401 without a session, 403
 * `forbidden` otherwise), limited per IP and per admin as the other admin routes.
 */
export function webhookRoutes(features: FeatureDeps): AnyRoute[] {
  const { guards, config, prisma, now } = features;
  const endpoints = new WebhookEndpoints({
    prisma,
    secrets: new WebhookSecrets(config.authSecret),
    policy: webhookUrlPolicy(config.webhooks),
    queue: new AttemptQueue({ timeoutMs: config.webhooks.timeoutMs }),
    now,
  });
  const limits = adminLimits({ now, logger: features.logger, stores: features.limiterStores, scope: "webhooks-admin" });
  const admin = adminGuard(new AdminRoles(prisma));
  // Only registration reads a body; the origin check refuses cross-site deletes and retries alike.
  const noBody = [guards.origin, guards.noStore, limits.perIp, guards.cookies, guards.signedIn, admin, limits.perAdmin];
  const withBody = [guards.origin, guards.noStore, limits.perIp, guards.body, guards.cookies, guards.signedIn, admin, limits.perAdmin];

  return [
    defineRoute({
      method: "post",
      path: BASE,
      tag: TAG,
      summary: "Register a webhook endpoint for some events; the answer holds its signing secret, shown this once",
      body: createWebhookBody,
      response: createdWebhookEndpointSchema,
      status: 201,
      reply: "json",
      guards: [...withBody, limits.sensitive],
      handler: ({ body, res }) => endpoints.create(signedInUser(res).user.id, body),
    }),
    defineRoute({
      method: "get",
      path: BASE,
      tag: TAG,
      summary: "Every webhook endpoint, newest first, never a secret",
      response: webhookEndpointsResponse,
      reply: "json",
      guards: noBody,
      handler: async () => ({ endpoints: await endpoints.list() }),
    }),
    defineRoute({
      method: "delete",
      path: `${BASE}/:id`,
      tag: TAG,
      summary: "Delete a webhook endpoint with its delivery log",
      params: webhookEndpointParams,
      response: webhookDeletedResponse,
      reply: "json",
      guards: noBody,
      handler: async ({ params }) => {
        await endpoints.remove(params.id);
        return { success: true as const };
      },
    }),
    defineRoute({
      method: "get",
      path: `${BASE}/:id/deliveries`,
      tag: TAG,
      summary: "An endpoint's delivery log, newest first: state, attempts, last status and error, next attempt",
      params: webhookEndpointParams,
      query: webhookDeliveriesQuery,
      response: webhookDeliveriesResponse,
      reply: "json",
      guards: noBody,
      handler: ({ params, query }) => endpoints.deliveries(params.id, query),
    }),
    defineRoute({
      method: "post",
      path: `${BASE}/:id/deliveries/:deliveryId/retry`,
      tag: TAG,
      summary: "Send a delivery again now, with the same webhook-id (409 while an attempt is in flight)",
      params: webhookDeliveryParams,
      response: webhookDeliverySchema,
      reply: "json",
      guards: noBody,
      handler: ({ params }) => endpoints.retry(params.id, params.deliveryId),
    }),
  ];
}
