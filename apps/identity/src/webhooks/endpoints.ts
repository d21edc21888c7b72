import { randomBytes } from "node:crypto";
import {
  type CreatedWebhookEndpoint,
  type CreateWebhookBody,
  isStorableTime,
  WEBHOOK_DELIVERIES_PAGE_SIZE,
  WEBHOOK_MAX_ENDPOINTS,
  type WebhookDeliveriesQuery,
  type WebhookDeliveriesResponse,
  type WebhookDeliveryView,
  type WebhookEndpointView,
  type WebhookEventType,
} from "@app/contracts";
import type { PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";
import type { OutboundUrlPolicy } from "@app/http-kit/outbound";
import { type AttemptQueue, prismaExecutor } from "./queue.js";
import { newSigningSecret, type WebhookSecrets } from "./secrets.js";

/** An endpoint's id: `wh_` and 16 random bytes, base64url. */
function newEndpointId(): string {
  return `wh_${randomBytes(16).toString("base64url")}`;
}

/** Serialises the endpoint count check with the insert, so two admins at once cannot pass the cap together. */
const ENDPOINT_LOCK = "webhook_endpoint_cap";

type EndpointRow = { id: string; url: string; events: string[]; createdAt: Date; createdBy: string | null };
type DeliveryRow = {
  id: string;
  messageId: string;
  state: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  lastAttemptAt: Date | null;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  createdAt: Date;
  message: { type: string };
};

const DELIVERY_SELECT = {
  id: true,
  messageId: true,
  state: true,
  attempts: true,
  lastStatus: true,
  lastError: true,
  lastAttemptAt: true,
  nextAttemptAt: true,
  deliveredAt: true,
  createdAt: true,
  message: { select: { type: true } },
} as const;

/** An endpoint as the admin reads it: never its secret. */
function endpointView(row: EndpointRow): WebhookEndpointView {
  return {
    id: row.id,
    url: row.url,
    events: row.events as WebhookEventType[],
    createdAt: row.createdAt.toISOString(),
    createdBy: row.createdBy,
  };
}

function deliveryView(row: DeliveryRow): WebhookDeliveryView {
  return {
    id: row.id,
    messageId: row.messageId,
    eventType: row.message.type,
    state: row.state as WebhookDeliveryView["state"],
    attempts: row.attempts,
    lastStatus: row.lastStatus,
    lastError: row.lastError,
    lastAttemptAt: row.lastAttemptAt?.toISOString() ?? null,
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    deliveredAt: row.deliveredAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

/** `<createdAt ms>.<id>` of a page's last delivery, base64url. */
function encodeCursor(row: { createdAt: Date; id: string }): string {
  return Buffer.from(`${row.createdAt.getTime()}.${row.id}`).toString("base64url");
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const dot = text.indexOf(".");
  const ms = Number(text.slice(0, dot));
  const id = text.slice(dot + 1);
  if (dot < 1 || !Number.isSafeInteger(ms) || !isStorableTime(ms) || !id) throw new AppError("bad_request", "cursor is malformed");
  return { createdAt: new Date(ms), id };
}

/** What {@link WebhookEndpoints} is built from. */
export interface WebhookEndpointsDeps {
  prisma: PrismaClient;
  secrets: WebhookSecrets;
  policy: OutboundUrlPolicy;
  queue: AttemptQueue;
  now: () => number;
}

/**
 * The admins' side of webhooks: endpoints (at most {@link WEBHOOK_MAX_ENDPOINTS}, each URL
 * checked against the outbound policy when saved and again, with DNS, on every request), their
 * delivery logs, and manual retries.
 */
export class WebhookEndpoints {
  readonly #deps: WebhookEndpointsDeps;

  constructor(deps: WebhookEndpointsDeps) {
    this.#deps = deps;
  }

  /** Registers an endpoint; the answer holds its signing secret, which is never shown again. */
  async create(adminId: string, body: CreateWebhookBody): Promise<CreatedWebhookEndpoint> {
    const problem = this.#deps.policy.problem(body.url);
    if (problem) {
      throw new AppError("validation_failed", `url ${problem}`, { issues: [{ path: "url", message: `url ${problem}` }] });
    }
    const id = newEndpointId();
    const secret = newSigningSecret();
    const events = [...new Set(body.events)];
    const row = await this.#deps.prisma.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${ENDPOINT_LOCK}))`;
      if ((await tx.webhookEndpoint.count()) >= WEBHOOK_MAX_ENDPOINTS) {
        throw new AppError("conflict", `at most ${WEBHOOK_MAX_ENDPOINTS} webhook endpoints: delete one before adding another`);
      }
      return tx.webhookEndpoint.create({
        data: {
          id,
          url: body.url,
          events,
          secretSealed: this.#deps.secrets.seal(id, secret),
          createdBy: adminId,
          createdAt: new Date(this.#deps.now()),
        },
      });
    });
    return { ...endpointView(row), secret };
  }

  /** Every endpoint, newest first. */
  async list(): Promise<WebhookEndpointView[]> {
    const rows = await this.#deps.prisma.webhookEndpoint.findMany({
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      select: { id: true, url: true, events: true, createdAt: true, createdBy: true },
    });
    return rows.map(endpointView);
  }

  /** Deletes an endpoint with its delivery log; attempts queued for it find nothing and end. */
  async remove(id: string): Promise<void> {
    const { count } = await this.#deps.prisma.webhookEndpoint.deleteMany({ where: { id } });
    if (count === 0) throw new AppError("not_found", "no such webhook endpoint");
  }

  /** A page of an endpoint's deliveries, newest first. */
  async deliveries(endpointId: string, query: WebhookDeliveriesQuery): Promise<WebhookDeliveriesResponse> {
    await this.#endpoint(endpointId);
    const limit = query.limit ?? WEBHOOK_DELIVERIES_PAGE_SIZE;
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const rows = await this.#deps.prisma.webhookDelivery.findMany({
      where: {
        endpointId,
        ...(after ? { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] } : {}),
      },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: limit + 1,
      select: DELIVERY_SELECT,
    });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return { deliveries: page.map(deliveryView), nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
  }

  /**
   * Sends a delivery again now, whatever its state (a receiver that lost a message it accepted
   * asks again): one attempt at once with the same `webhook-id`, then the schedule's retries while
   * the event's retry window lasts. 409 while an attempt is in flight.
   */
  async retry(endpointId: string, deliveryId: string): Promise<WebhookDeliveryView> {
    const now = new Date(this.#deps.now());
    return this.#deps.prisma.$transaction(async (tx) => {
      const [locked] = await tx.$queryRaw<{ attempts: number; state: string }[]>`
        SELECT attempts, state FROM webhook_delivery WHERE id = ${deliveryId} AND endpoint_id = ${endpointId} FOR UPDATE`;
      if (!locked) throw new AppError("not_found", "no such delivery of this webhook endpoint");
      if (locked.state === "sending") throw new AppError("conflict", "this delivery is being sent right now; try again in a moment");
      const row = await tx.webhookDelivery.update({
        where: { id: deliveryId },
        data: { state: "pending", nextAttemptAt: now },
        select: DELIVERY_SELECT,
      });
      await this.#deps.queue.add(prismaExecutor(tx), [{ deliveryId, attempt: locked.attempts, startAfter: now }]);
      return deliveryView(row);
    });
  }

  async #endpoint(id: string): Promise<void> {
    const found = await this.#deps.prisma.webhookEndpoint.findUnique({ where: { id }, select: { id: true } });
    if (!found) throw new AppError("not_found", "no such webhook endpoint");
  }
}
