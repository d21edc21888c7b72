import "../oauth.css";
import type { AuthorizedApp } from "@app/client";
import { confirmAction } from "../confirm.js";
import type { View } from "../context.js";
import { h } from "../dom.js";
import { scopeWords } from "../oauth-scopes.js";
import { pagedList } from "../paged-list.js";
import { appName, siteHost } from "./oauth-consent.js";

/** What revoking does, in the words the page and its notices use. */
export const REVOKE_WORDS =
  "Revoking an app ends its refresh tokens at once, so it cannot renew its access; access tokens it already holds keep working until they expire (an hour at most, unless the service is set up otherwise). To connect again, it must ask you again.";

/**
 * One row per app: identity keeps a consent per browser session that gave one, and revoking any
 * of them revokes the app (every consent to that client). The newest consent's date is shown,
 * with every scope any of them granted.
 */
export function byApp(consents: readonly AuthorizedApp[]): AuthorizedApp[] {
  const apps = new Map<string, AuthorizedApp>();
  for (const consent of consents) {
    const seen = apps.get(consent.clientId);
    if (!seen) apps.set(consent.clientId, { ...consent, scopes: [...consent.scopes] });
    else {
      seen.scopes = [...new Set([...seen.scopes, ...consent.scopes])];
      if (consent.createdAt > seen.createdAt) apps.set(consent.clientId, { ...consent, scopes: seen.scopes });
    }
  }
  return [...apps.values()].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

/** Account → Authorized apps: the apps the user allowed to use the account, each with what it may do and Revoke. */
export const authorizedAppsView: View = (ctx, root) => {
  const list = pagedList<AuthorizedApp>({
    id: "authorized-apps",
    empty: "You have not authorized any app.",
    load: async () => ({ items: byApp(await ctx.client.auth.oauth2.getConsents()), nextCursor: null }),
    row: (app) => {
      const name = appName({ client_id: app.clientId, ...(app.clientName ? { client_name: app.clientName } : {}) });
      const host = siteHost(app.clientUri);
      const revoke = h("button", { type: "button", class: "danger small", "aria-label": `Revoke ${name}` }, "Revoke");
      revoke.addEventListener("click", () => {
        void confirmAction(`Revoke ${name}?`, "Revoke").then((yes) => {
          if (!yes) return;
          revoke.disabled = true;
          ctx.client.auth.oauth2
            .deleteConsent({ id: app.id })
            .then(() => {
              list.remove(app.clientId);
              ctx.showNotice(`${name} is revoked: it can no longer renew its access, and access tokens it holds end when they expire.`);
            })
            .catch((e: unknown) => {
              revoke.disabled = false;
              ctx.showError(e);
            });
        });
      });
      return h(
        "li",
        { "data-id": app.clientId, class: "app-row" },
        h(
          "div",
          { class: "grow" },
          h("strong", {}, name),
          host ? h("p", { class: "muted" }, host) : null,
          h(
            "ul",
            { class: "app-scopes", "aria-label": `What ${name} may do` },
            ...app.scopes.map((scope) => h("li", {}, scopeWords(scope).title)),
          ),
        ),
        h("span", { class: "muted" }, `Allowed ${new Date(app.createdAt).toLocaleString()}`),
        revoke,
      );
    },
  });
  root.append(
    h("h1", {}, "Authorized apps"),
    h("p", {}, h("a", { href: "#/account", id: "apps-back" }, "Back to the account")),
    h("p", { class: "muted" }, "Apps you allowed to use your account, such as an assistant connected to your tasks."),
    h("p", { class: "muted", id: "revoke-words" }, REVOKE_WORDS),
    list.element,
  );
  list.reload().catch((e: unknown) => ctx.showError(e));
  return () => list.stop();
};
