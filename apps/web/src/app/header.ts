import "./organizations.css";
import type { AppContext } from "./context.js";
import { h, replace } from "./dom.js";
import { adminUserHref } from "./router.js";

/**
 * The header's organization switcher: "Personal" (the user's own work) or one of the user's
 * organizations. Picking one makes it the session's active organization (set-active), which the
 * projects page lists and creates in; nothing shows for a user in no organization.
 */
export function organizationSwitcher(ctx: AppContext): HTMLElement | null {
  if (!ctx.user || ctx.organizations.length === 0) return null;
  const active = ctx.activeOrganizationId;
  const select = h(
    "select",
    { id: "org-switcher", name: "organization" },
    h("option", { value: "", selected: active === null }, "Personal"),
    ...ctx.organizations.map((org) => h("option", { value: org.id, selected: org.id === active }, org.name)),
  );
  select.addEventListener("change", () => {
    select.disabled = true;
    ctx.setActiveOrganization(select.value || null).catch((error: unknown) => {
      select.disabled = false;
      select.value = ctx.activeOrganizationId ?? "";
      ctx.showError(error);
    });
  });
  return h("div", { class: "org-switcher" }, h("label", { for: "org-switcher" }, "Working in"), select);
}

/**
 * The banner of an impersonation session (get-session's `session.impersonatedBy`): whose account
 * the admin is acting in, on every page, with "Stop impersonating", which brings the admin's own
 * session back and opens that user's admin page.
 */
export function renderImpersonationBanner(ctx: AppContext, banner: HTMLElement): void {
  const user = ctx.user;
  if (!user || !ctx.impersonatedBy) {
    replace(banner);
    banner.hidden = true;
    return;
  }
  const stop = h("button", { type: "button", id: "stop-impersonating", class: "secondary small" }, "Stop impersonating");
  stop.addEventListener("click", () => {
    stop.disabled = true;
    ctx.client.auth.admin
      .stopImpersonating()
      .then((admin) =>
        ctx.switchedUser(admin, adminUserHref(user.id), `You are yourself again; you stopped acting as ${user.email ?? "the user"}.`),
      )
      .catch((error: unknown) => {
        stop.disabled = false;
        ctx.showError(error);
      });
  });
  replace(
    banner,
    h(
      "p",
      { class: "banner-text", id: "impersonation-text" },
      `You are acting as ${user.name ? `${user.name} (${user.email ?? user.id})` : (user.email ?? user.id)}: everything you do here is done as this user.`,
    ),
    stop,
  );
  banner.hidden = false;
}
