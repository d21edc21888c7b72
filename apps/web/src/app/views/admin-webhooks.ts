import "../organizations.css";
import "../factors.css";
import type { CreatedWebhookEndpoint, WebhookDeliveryView, WebhookEndpointView, WebhookEventType } from "@app/contracts";
import { WEBHOOK_EVENT_TYPES } from "@app/contracts";
import { deleteButton } from "../confirm.js";
import type { AppContext, View } from "../context.js";
import { field, h, replace } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { pagedList } from "../paged-list.js";
import { adminNav, adminRefusal } from "./admin-users.js";

/** What each event says, as the form lists them. */
export const EVENT_WORDS: Record<WebhookEventType, string> = {
  "user.created": "A user signed up or was created",
  "user.updated": "A user's profile, address, role or suspension changed",
  "user.deleted": "A user was deleted",
  "session.created": "A user signed in",
  "session.revoked": "A session ended (signed out, revoked or suspended)",
  "organization.created": "An organization was created",
  "organization.updated": "An organization was renamed or changed",
  "organization.deleted": "An organization was deleted",
  "organization.member_added": "A member joined an organization",
  "organization.member_updated": "A member's role changed",
  "organization.member_removed": "A member left or was removed",
};

const when = (iso: string) => new Date(iso).toLocaleString();

/** A delivery's state in words: delivered when, waiting for when, or why it failed. */
export function deliveryWords(delivery: WebhookDeliveryView): string {
  const tries = delivery.attempts === 1 ? "1 attempt" : `${delivery.attempts} attempts`;
  const reason = delivery.lastError ? ` Last: ${delivery.lastError}.` : "";
  switch (delivery.state) {
    case "succeeded":
      return delivery.deliveredAt ? `Delivered ${when(delivery.deliveredAt)} after ${tries}.` : `Delivered after ${tries}.`;
    case "sending":
      return `Being sent now (${tries} before).`;
    case "pending":
      return delivery.attempts === 0
        ? "Waiting for its first attempt."
        : `Trying again ${delivery.nextAttemptAt ? when(delivery.nextAttemptAt) : "soon"} (${tries} so far).${reason}`;
    case "failed":
      return `Failed after ${tries}; no more automatic retries.${reason}`;
  }
}

/** The pill of a delivery's state. */
export function deliveryPill(state: WebhookDeliveryView["state"]): { text: string; danger: boolean } {
  return {
    succeeded: { text: "delivered", danger: false },
    sending: { text: "sending", danger: false },
    pending: { text: "retrying", danger: false },
    failed: { text: "failed", danger: true },
  }[state];
}

/** The card that shows a new endpoint's signing secret this once, with a copy button. */
function secretCard(ctx: AppContext, created: CreatedWebhookEndpoint, done: () => void): HTMLElement {
  const copy = h("button", { type: "button", class: "secondary", id: "webhook-secret-copy" }, "Copy the secret");
  copy.addEventListener("click", () => {
    navigator.clipboard
      .writeText(created.secret)
      .then(() => ctx.showNotice("The signing secret is copied."))
      .catch(() => ctx.showNotice("Copying did not work here: select the secret and copy it by hand."));
  });
  const close = h("button", { type: "button", id: "webhook-secret-done" }, "I have saved it");
  const card = h(
    "section",
    { id: "webhook-secret", class: "card admin-section", role: "region", "aria-labelledby": "webhook-secret-title" },
    h("h2", { id: "webhook-secret-title", tabindex: -1 }, "The endpoint's signing secret"),
    h("p", {}, `Requests to ${created.url} are signed with this secret. Copy it now: it is not shown again.`),
    h("p", {}, h("code", { id: "webhook-secret-value" }, created.secret)),
    h("p", { class: "muted" }, "Verify each request's webhook-signature with it (any Standard Webhooks library does)."),
    h("div", { class: "inline" }, copy, close),
  );
  close.addEventListener("click", () => {
    card.remove();
    done();
  });
  return card;
}

/** An endpoint's delivery log on the page. */
interface DeliveryLog {
  element: HTMLElement;
  reload(): Promise<void>;
  stop(): void;
}

/** One endpoint's delivery log, newest first, with a retry button per delivery. */
function deliveryLog(ctx: AppContext, endpoint: WebhookEndpointView): DeliveryLog {
  const list = pagedList<WebhookDeliveryView>({
    id: `webhook-log-${endpoint.id}`,
    empty: "No event was sent to this endpoint yet.",
    load: async (cursor) => {
      const page = await ctx.client.auth.webhooks.deliveries(endpoint.id, cursor ? { cursor } : {});
      return { items: page.deliveries, nextCursor: page.nextCursor };
    },
    row: (delivery) => {
      const pill = deliveryPill(delivery.state);
      const retry = h(
        "button",
        { type: "button", class: "secondary small", "aria-label": `Retry ${delivery.eventType} ${delivery.messageId}` },
        "Retry",
      );
      retry.disabled = delivery.state === "sending";
      retry.addEventListener("click", () => {
        retry.disabled = true;
        ctx.client.auth.webhooks
          .retry(endpoint.id, delivery.id)
          .then((updated) => {
            list.update(delivery.id, updated);
            ctx.showNotice(`${delivery.eventType} is being sent again, with the same webhook-id.`);
          })
          .catch((error: unknown) => {
            retry.disabled = false;
            ctx.showError(error);
          });
      });
      return h(
        "li",
        { class: "item", "data-id": delivery.id, "data-state": delivery.state },
        h(
          "div",
          { class: "grow" },
          h("strong", {}, delivery.eventType),
          h("p", { class: "muted" }, `${delivery.messageId} · ${when(delivery.createdAt)}`),
          h("p", {}, deliveryWords(delivery)),
        ),
        h("span", { class: pill.danger ? "pill danger" : "pill" }, pill.text),
        retry,
      );
    },
  });
  void list.reload();
  return { element: list.element, reload: () => list.reload(), stop: () => list.stop() };
}

/**
 * Admin → Webhooks: the endpoints other systems receive identity's events at (signed per the
 * Standard Webhooks specification), a form to add one (its secret shown once), and per endpoint
 * its delivery log with retries.
 */
export const adminWebhooksView: View = (ctx, root) => {
  const checks = WEBHOOK_EVENT_TYPES.map((type) =>
    h(
      "label",
      { class: "check" },
      h("input", { type: "checkbox", name: "events", value: type }),
      h("span", {}, h("code", {}, type), ` ${EVENT_WORDS[type]}`),
    ),
  );
  const form = h(
    "form",
    { id: "webhook-form", class: "card stack", novalidate: true, "aria-label": "Add a webhook endpoint" },
    h("h2", {}, "Add an endpoint"),
    labelled(
      "URL",
      h("input", { name: "url", type: "url", required: true, maxlength: 2048, autocomplete: "off", placeholder: "https://" }),
      {
        hint: "Where each event is POSTed. In production it must be https on a public address.",
      },
    ),
    h("fieldset", {}, h("legend", {}, "Events"), ...checks, h("p", { class: "field-issue", "data-issue-for": "events" })),
    h("div", { class: "inline" }, h("button", { type: "submit" }, "Add endpoint")),
    formSummary(),
  );
  const secret = h("div", {});
  const list = h("ul", { id: "webhook-endpoints", class: "list" });
  const body = h("div", { id: "webhooks-body", "data-state": "loading" }, list);
  root.append(
    h("h1", {}, "Webhooks"),
    adminNav("webhooks"),
    h(
      "p",
      { class: "muted" },
      "Other systems learn of sign-ups, profile changes, deletions, sign-ins and organization changes as they happen. Failed deliveries are retried for a day with growing waits.",
    ),
    secret,
    body,
    form,
  );
  let alive = true;
  const logs = new Map<string, DeliveryLog>();

  const row = (endpoint: WebhookEndpointView): HTMLElement => {
    // The log loads when first opened, and again on each later opening.
    const panel = h("details", { class: "tools", "data-endpoint": endpoint.id }, h("summary", {}, "Delivery log"));
    panel.addEventListener("toggle", () => {
      if (!panel.open) return;
      const open = logs.get(endpoint.id);
      if (open) {
        void open.reload();
        return;
      }
      const log = deliveryLog(ctx, endpoint);
      logs.set(endpoint.id, log);
      panel.append(log.element);
    });
    const remove = deleteButton(
      `Delete the endpoint ${endpoint.url}`,
      `Delete the endpoint ${endpoint.url}? Its delivery log goes with it.`,
      async () => {
        await ctx.client.auth.webhooks.remove(endpoint.id);
        item.remove();
        ctx.showNotice(`${endpoint.url} no longer receives events.`);
      },
      (error) => ctx.showError(error),
    );
    const item = h(
      "li",
      { class: "item wrap", "data-id": endpoint.id },
      h(
        "div",
        { class: "grow" },
        h("strong", {}, endpoint.url),
        h("p", { class: "muted" }, `Added ${when(endpoint.createdAt)}`),
        h("p", {}, ...endpoint.events.map((type) => h("span", { class: "pill" }, type))),
      ),
      remove,
      panel,
    );
    return item;
  };

  const load = async (): Promise<void> => {
    body.dataset.state = "loading";
    const endpoints = await ctx.client.auth.webhooks.list();
    if (!alive) return;
    replace(list, ...endpoints.map(row));
    if (!endpoints.length) list.append(h("li", { class: "muted", id: "webhooks-empty" }, "No endpoint yet."));
    body.dataset.state = "ready";
  };
  const run = () =>
    load().catch((error: unknown) => {
      if (alive) adminRefusal(ctx, body, error);
    });

  onSubmit(form, async () => {
    const events = new FormData(form).getAll("events").map(String) as WebhookEventType[];
    const created = await ctx.client.auth.webhooks.create({ url: field(form, "url").trim(), events });
    form.reset();
    replace(
      secret,
      secretCard(ctx, created, () => secret.replaceChildren()),
    );
    secret.querySelector<HTMLElement>("#webhook-secret-title")?.focus();
    await load();
  });
  void run();
  return () => {
    alive = false;
    for (const log of logs.values()) log.stop();
  };
};
