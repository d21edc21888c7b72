import "../organizations.css";
import { ApiError, type AppClient } from "@app/client";
import { type AdminEventView, SECURITY_EVENT_TYPES, type SecurityEventType } from "@app/contracts";
import type { View } from "../context.js";
import { field, h } from "../dom.js";
import { labelled } from "../forms.js";
import { pagedList } from "../paged-list.js";
import { adminUserHref } from "../router.js";
import { eventRow, eventWords } from "./activity.js";
import { adminNav, adminRefusal } from "./admin-users.js";

/** The filters of the admins' query, as the SDK takes them. */
export type EventFilters = NonNullable<Parameters<AppClient["auth"]["events"]["adminList"]>[0]>;

/** Ids and addresses are pasted from elsewhere: surrounding spaces are not part of them. */
const clean = (value: string) => value.trim() || undefined;

/** The filters a submitted form names (empty fields filter nothing). */
export function filtersOf(values: {
  userId: string;
  type: string;
  outcome: string;
  from: string;
  to: string;
  ip: string;
  actorId: string;
}): EventFilters {
  const type = SECURITY_EVENT_TYPES.find((t) => t === values.type);
  const outcome = values.outcome === "success" || values.outcome === "failure" ? values.outcome : undefined;
  return {
    userId: clean(values.userId),
    type,
    outcome,
    from: clean(values.from),
    to: clean(values.to),
    ip: clean(values.ip),
    actorId: clean(values.actorId),
  };
}

/** A type's name in the filter's list: its words as an admin reads them ("Signed in"). */
function typeLabel(type: SecurityEventType): string {
  if (type === "role_changed") return "Admin role changed";
  if (type === "user_banned") return "Suspended or lifted";
  if (type === "key_rotated") return "Signing key made or retired";
  if (type === "session_revoked") return "Sessions ended";
  return eventWords({ type }, "admin");
}

/**
 * Admin → Security events: every user's events (and those of no user: sign-ins for unknown
 * addresses, signing keys), newest first, filtered by user, type, outcome, dates, IP and acting
 * admin, a page at a time.
 */
export const adminEventsView: View = (ctx, root) => {
  const input = (name: string, props: Record<string, string> = {}) => h("input", { name, autocomplete: "off", ...props });
  const form = h(
    "form",
    { id: "event-filters", class: "card inline wrap", role: "search", novalidate: true, "aria-label": "Filter security events" },
    labelled("User id", input("userId", { maxlength: "100" })),
    labelled(
      "What",
      h(
        "select",
        { name: "type" },
        h("option", { value: "" }, "Anything"),
        ...SECURITY_EVENT_TYPES.map((type) => h("option", { value: type }, typeLabel(type))),
      ),
    ),
    labelled(
      "Outcome",
      h(
        "select",
        { name: "outcome" },
        h("option", { value: "" }, "Either"),
        h("option", { value: "success" }, "Succeeded"),
        h("option", { value: "failure" }, "Failed"),
      ),
    ),
    labelled("From", input("from", { type: "date" })),
    labelled("To (included)", input("to", { type: "date" })),
    labelled("IP address", input("ip", { maxlength: "64" })),
    labelled("By admin (id)", input("actorId", { maxlength: "100" })),
    h("button", { type: "submit" }, "Show events"),
  );
  let filters: EventFilters = {};
  const body = h("div", { id: "admin-events-body" });
  const list = pagedList<AdminEventView>({
    id: "admin-events",
    empty: "No event matches these filters.",
    load: async (cursor) => {
      try {
        const page = await ctx.client.auth.events.adminList({ ...filters, cursor });
        return { items: page.events, nextCursor: page.nextCursor };
      } catch (error) {
        if (error instanceof ApiError && error.status === 403) adminRefusal(ctx, body, error);
        throw error;
      }
    },
    row: (event) => {
      // The id's start names the user in the row; the whole id is the link's title and filters by user.
      const who = event.userId
        ? h("a", { href: adminUserHref(event.userId), title: event.userId }, `User ${event.userId.slice(0, 8)}`)
        : h("span", {}, "No account");
      const actor = event.actorId
        ? [" · by ", h("a", { href: adminUserHref(event.actorId), title: event.actorId }, `admin ${event.actorId.slice(0, 8)}`)]
        : [];
      return eventRow(event, "admin", [h("p", { class: "muted event-who" }, who, ...actor)]);
    },
  });
  body.append(list.element);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    filters = filtersOf({
      userId: field(form, "userId"),
      type: field(form, "type"),
      outcome: field(form, "outcome"),
      from: field(form, "from"),
      to: field(form, "to"),
      ip: field(form, "ip"),
      actorId: field(form, "actorId"),
    });
    void list.reload();
  });
  root.append(h("h1", {}, "Security events"), adminNav("events"), form, body);
  void list.reload();
  return () => list.stop();
};
