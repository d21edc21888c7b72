import "../organizations.css";
import { ApiError } from "@app/client";
import type { ManagedUser } from "@app/contracts";
import type { AppContext, View } from "../context.js";
import { field, h, replace } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { describeError } from "../messages.js";
import { adminUserHref } from "../router.js";
import { reportSessionEnd } from "../session.js";

/** Users shown per page of the search. */
export const USERS_PER_PAGE = 20;

/** The admin area's pages, as its navigation names them. */
export type AdminSection = "users" | "roles" | "events" | "webhooks";

/** The admin area's own links: users (search, suspensions, sessions, impersonation), roles, security events and webhooks. */
export function adminNav(current: AdminSection): HTMLElement {
  const link = (href: string, key: AdminSection, text: string) =>
    h("a", { href, id: `admin-nav-${key}`, ...(current === key ? { "aria-current": "page" } : {}) }, text);
  return h(
    "nav",
    { class: "subnav", "aria-label": "Admin" },
    link("#/admin/users", "users", "Users"),
    link("#/admin", "roles", "Roles"),
    link("#/admin/events", "events", "Security events"),
    link("#/admin/webhooks", "webhooks", "Webhooks"),
  );
}

/** The line that says what a refused admin page is (403 for anyone without the admin role). */
export function adminRefusal(ctx: AppContext, body: HTMLElement, error: unknown): void {
  if (reportSessionEnd(error)) return;
  if (error instanceof ApiError && error.status === 403) {
    replace(body, h("p", { id: "admin-forbidden", class: "notice" }, "Only admins can see this page (your account has no admin role)."));
    return;
  }
  replace(body, h("p", { role: "alert", class: "list-error-text" }, describeError(error)));
  ctx.showError(error);
}

/** The pills of a user row: admin, suspended. */
export function userPills(user: ManagedUser): HTMLElement[] {
  const pills: HTMLElement[] = [];
  if (user.role === "admin") pills.push(h("span", { class: "pill" }, "admin"));
  if (user.banned) pills.push(h("span", { class: "pill danger" }, "suspended"));
  return pills;
}

/**
 * Admin → Users: a search by email or name (identity's list-users), a page of matches with their
 * role and suspension, and a page per user (views/admin-user.ts).
 */
export const adminUsersView: View = (ctx, root) => {
  const form = h(
    "form",
    { id: "user-search", class: "card inline wrap", role: "search", novalidate: true, "aria-label": "Search users" },
    labelled("Search", h("input", { name: "q", type: "search", autocomplete: "off", maxlength: 200 })),
    labelled(
      "In",
      h("select", { name: "field" }, h("option", { value: "email" }, "Email address"), h("option", { value: "name" }, "Name")),
    ),
    h("button", { type: "submit" }, "Search"),
    formSummary(),
  );
  const summary = h("p", { id: "user-search-summary", class: "muted", role: "status" });
  const list = h("ul", { id: "user-search-list", class: "list" });
  const previous = h("button", { type: "button", class: "secondary", id: "user-search-previous" }, "Previous page");
  const next = h("button", { type: "button", class: "secondary", id: "user-search-next" }, "Next page");
  const pager = h("div", { class: "pager" }, previous, next);
  const body = h("div", { id: "user-search-body", "data-state": "loading" }, summary, list, pager);
  root.append(h("h1", {}, "Users"), adminNav("users"), form, body);
  let alive = true;
  let query = { searchValue: "", searchField: "email" as "email" | "name", offset: 0 };

  const row = (user: ManagedUser) =>
    h(
      "li",
      { class: "item", "data-user-id": user.id },
      h("div", { class: "grow" }, h("strong", {}, user.name || user.email), h("p", { class: "muted" }, user.email)),
      ...userPills(user),
      h("a", { href: adminUserHref(user.id), "aria-label": `Manage ${user.email}` }, "Manage"),
    );

  const load = async (): Promise<void> => {
    body.dataset.state = "loading";
    const page = await ctx.client.auth.admin.listUsers({
      limit: USERS_PER_PAGE,
      offset: query.offset,
      sortBy: "createdAt",
      sortDirection: "desc",
      ...(query.searchValue ? { searchValue: query.searchValue, searchField: query.searchField, searchOperator: "contains" } : {}),
    });
    if (!alive) return;
    replace(list, ...page.users.map(row));
    const first = page.users.length ? query.offset + 1 : 0;
    summary.textContent = page.total
      ? `Users ${first}–${query.offset + page.users.length} of ${page.total}${query.searchValue ? ` matching “${query.searchValue}”` : ""}.`
      : query.searchValue
        ? `No user matches “${query.searchValue}”.`
        : "No users.";
    previous.hidden = query.offset === 0;
    next.hidden = query.offset + page.users.length >= page.total;
    pager.hidden = previous.hidden && next.hidden;
    body.dataset.state = "ready";
  };
  const run = () =>
    load().catch((error: unknown) => {
      if (alive) adminRefusal(ctx, body, error);
    });

  onSubmit(form, async () => {
    query = { searchValue: field(form, "q").trim(), searchField: field(form, "field") === "name" ? "name" : "email", offset: 0 };
    await load();
  });
  previous.addEventListener("click", () => {
    query = { ...query, offset: Math.max(0, query.offset - USERS_PER_PAGE) };
    void run();
  });
  next.addEventListener("click", () => {
    query = { ...query, offset: query.offset + USERS_PER_PAGE };
    void run();
  });
  void run();
  return () => {
    alive = false;
  };
};
