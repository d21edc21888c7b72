import "../oauth.css";
import { ApiError, type PublicClient, signedConsentQuery } from "@app/client";
import type { AppContext, View } from "../context.js";
import { h, replace } from "../dom.js";
import { describeError } from "../messages.js";
import { narrowedScope, scopesOf, scopeWords } from "../oauth-scopes.js";
import { consentHref } from "../router.js";
import { reportSessionEnd } from "../session.js";
import { authView } from "./auth.js";

/** Said when the page's query is not identity's signed one: opened by hand, altered, or too old. */
export const CONSENT_LINK_SENTENCE =
  "This request to connect an app cannot be used: it has expired, or its address was changed. Go back to the app and connect again.";

/** An application's name as the page shows it (a client may register none). */
export function appName(client: Pick<PublicClient, "client_name" | "client_id">): string {
  return client.client_name?.trim() || "An app without a name";
}

/** The host of an app's registered site, for "site: notes.example"; undefined for anything but an http(s) URL. */
export function siteHost(uri: string | undefined): string | undefined {
  if (!uri) return undefined;
  try {
    const url = new URL(uri);
    return url.protocol === "https:" || url.protocol === "http:" ? url.host : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The sentence for a refusal of the consent page's calls. `invalid_signature` here is about the
 * page's query, not the session (the general sentence would say the session ended).
 */
export function consentErrorSentence(error: unknown): string {
  if (error instanceof ApiError && error.code === "invalid_signature") return CONSENT_LINK_SENTENCE;
  return describeError(error);
}

/** A link to an app's own page (its site, policy or terms), when it is an http(s) URL: never a referrer, never this window. */
function outLink(href: string | undefined, text: string, id: string): HTMLAnchorElement | null {
  if (!siteHost(href)) return null;
  return h("a", { href, id, target: "_blank", rel: "noopener noreferrer nofollow" }, text);
}

/** One scope asked for: a box to untick, or a line for what every consent includes. */
function scopeItem(scope: string): HTMLElement {
  const words = scopeWords(scope);
  const id = `scope-${scope.replace(/[^a-z0-9]/gi, "-")}`;
  const detail = h("span", { class: "hint muted", id: `${id}-detail` }, words.detail);
  if (words.required) {
    return h(
      "li",
      { "data-scope": scope },
      h("span", { class: "scope-title scope-fixed" }, words.title),
      h("span", { class: "hint muted" }, `${words.detail} Always included.`),
    );
  }
  return h(
    "li",
    { "data-scope": scope },
    h(
      "label",
      { class: "check", for: id },
      h("input", { type: "checkbox", id, name: "scope", value: scope, checked: true, "aria-describedby": detail.id }),
      h("span", { class: "scope-title" }, words.title),
    ),
    detail,
  );
}

/** The signed-in part: who asks, for what, and Allow or Deny. */
function decide(ctx: AppContext, root: HTMLElement, query: string, alive: () => boolean): void {
  const params = new URLSearchParams(query);
  const clientId = params.get("client_id") ?? "";
  const requested = scopesOf(params.get("scope"));
  const body = h("div", { id: "consent-body", class: "card", "data-state": "loading", "aria-live": "polite" }, h("p", {}, "Loading…"));
  root.append(body);
  const stop = (error: unknown) => {
    if (error instanceof ApiError && error.status === 401 && error.code !== "invalid_signature") {
      // The session ended: the sign-in page opens, and this page again after it.
      ctx.returnAfterSignIn(consentHref(query));
      if (reportSessionEnd(error)) return;
    }
    body.dataset.state = "error";
    replace(
      body,
      h("p", { id: "consent-problem", role: "alert" }, consentErrorSentence(error)),
      h("p", {}, h("a", { href: "#/tasks" }, "Go to your tasks")),
    );
  };
  if (!clientId || !signedConsentQuery(query)) {
    stop(new ApiError(401, "invalid_signature", "the consent page has no signed query"));
    return;
  }

  ctx.client.auth.oauth2
    .publicClient({ clientId })
    .then((client) => {
      if (!alive()) return;
      const name = appName(client);
      const host = siteHost(client.client_uri);
      const scopes = h("ul", { id: "consent-scopes", class: "scope-list" }, ...requested.map(scopeItem));
      const allow = h("button", { type: "button", id: "consent-allow" }, "Allow");
      const deny = h("button", { type: "button", id: "consent-deny", class: "secondary" }, "Deny");
      const problem = h("p", { id: "consent-error", class: "form-error", role: "alert" });
      const decideWith = (accept: boolean) => {
        problem.textContent = "";
        const chosen = [...scopes.querySelectorAll<HTMLInputElement>("input[name=scope]:checked")].map((box) => box.value);
        const scope = accept ? narrowedScope(requested, chosen) : undefined;
        if (accept && scope === "") {
          problem.textContent = "Tick at least one permission to allow, or choose Deny.";
          return;
        }
        allow.disabled = true;
        deny.disabled = true;
        ctx.client.auth.oauth2
          .consent({ accept, oauthQuery: query, ...(scope !== undefined ? { scope } : {}) })
          .then((next) => {
            body.dataset.state = "leaving";
            ctx.showNotice(accept ? `Taking you back to ${name}…` : `You denied ${name}. Taking you back to it…`);
            location.assign(next);
          })
          .catch((error: unknown) => {
            allow.disabled = false;
            deny.disabled = false;
            if (!alive()) return;
            if (error instanceof ApiError && error.status === 401 && error.code !== "invalid_signature") return stop(error);
            problem.textContent = consentErrorSentence(error);
          });
      };
      allow.addEventListener("click", () => decideWith(true));
      deny.addEventListener("click", () => decideWith(false));
      const links = [
        outLink(client.policy_uri, "Its privacy policy", "consent-policy"),
        outLink(client.tos_uri, "Its terms", "consent-terms"),
      ].filter((link) => link !== null);
      const site = outLink(client.client_uri, host ?? "", "consent-site-link");
      body.dataset.state = "ready";
      replace(
        body,
        h("h2", { id: "consent-app", tabindex: -1 }, name),
        h("p", { id: "consent-site", class: "muted" }, site ? h("span", {}, "Its site: ", site) : "It names no site."),
        links.length ? h("p", { class: "inline" }, ...links) : null,
        h(
          "p",
          { id: "consent-who" },
          `${name} asks to use your account${ctx.user?.email ? ` ${ctx.user.email}` : ""}. It will be able to:`,
        ),
        requested.length ? scopes : h("p", { class: "muted" }, "Nothing in particular: it asks for no permission."),
        h(
          "p",
          { class: "hint muted", id: "consent-warning" },
          "Anyone can register an app with this service, and its name and site are its own words. Allow only an app you are connecting yourself right now.",
        ),
        h("div", { class: "inline" }, allow, deny),
        problem,
        h(
          "p",
          { class: "hint muted" },
          "You can revoke it at any time in ",
          h("a", { href: "#/authorized-apps", id: "consent-apps-link" }, "Account → Authorized apps"),
          ".",
        ),
      );
      // The app's name is read first; Allow is never the default, so Enter alone grants nothing.
      body.querySelector<HTMLElement>("#consent-app")?.focus();
    })
    .catch((error: unknown) => {
      if (alive()) stop(error);
    });
}

/**
 * The consent page of an authorization request (`/oauth/consent?<signed query>`, router.ts):
 * identity sends a signed-in browser here with the request's client and scopes. Signed out, the
 * page asks to sign in first and opens again after; signed in, it shows the app's name and site
 * and what it asks for, scope by scope in words (the optional ones can be unticked), and Allow or
 * Deny, which go to identity (POST oauth2/consent) and then where identity says: on to the app.
 */
export const oauthConsentView: View = (ctx, root, params) => {
  const query = params.query ?? "";
  root.append(h("h1", { id: "consent-title" }, "Connect an app to your account"));
  if (!ctx.user) {
    ctx.returnAfterSignIn(consentHref(query));
    root.append(
      h(
        "p",
        { id: "consent-sign-in", class: "notice" },
        "An app asks to connect to your account. Sign in first; this page opens again after.",
      ),
    );
    const forms = h("div", { id: "consent-auth" });
    root.append(forms);
    return authView(ctx, forms, {});
  }
  let alive = true;
  decide(ctx, root, query, () => alive);
  return () => {
    alive = false;
  };
};
