import type { LinkedAccount, SocialProviderInfo } from "@app/contracts";
import type { AppContext } from "../context.js";
import { h, replace } from "../dom.js";
import { pagedList } from "../paged-list.js";

/** list-accounts' provider id for the email and password (apps/identity/src/services/oidc/linked-accounts.ts). */
const PASSWORD = "credential";

/**
 * Where identity sends the browser once a provider is linked: the account page, whose hash names
 * the provider for the notice ({@link takeLinkedLanding}). Identity keeps the fragment, and the
 * landing has no query, so main.ts leaves the hash to this page.
 */
export function linkedLanding(provider: string): string {
  return `${location.origin}/#/account?linked=${encodeURIComponent(provider)}`;
}

/**
 * Where it sends the browser after a failure, with `&error=<code>` added to the query: main.ts
 * reads `?authError=1` as a provider's error (verify-banner.ts `landingMessage`) and shows its
 * sentence (messages.ts) on the account page.
 */
export function linkErrorLanding(): string {
  return `${location.origin}/?authError=1#/account`;
}

/** The provider id a link's landing names (`#/account?linked=<id>`), taken out of the address bar. */
export function takeLinkedLanding(): string | undefined {
  const [path = "", query] = location.hash.split("?");
  if (query === undefined) return undefined;
  history.replaceState(null, "", `${location.pathname}${location.search}${path}`);
  return new URLSearchParams(query).get("linked") ?? undefined;
}

/**
 * "Linked sign-in methods": the password and each provider identity of the user (GET
 * list-accounts), Unlink for a provider while another way to sign in remains (identity refuses the
 * last one), and "Link {name}" for every offered provider not linked yet (POST link-social, then
 * the provider's page). Identity links only a provider that vouches for the user's own, verified
 * address (docs/sign-in-providers.md).
 */
export function linkedAccountsSection(ctx: AppContext): { element: HTMLElement; stop(): void } {
  const landed = takeLinkedLanding();
  let providers: SocialProviderInfo[] = [];
  let linkedCount = 0;
  const nameOf = (id: string) => (id === PASSWORD ? "Password" : (providers.find((p) => p.id === id)?.name ?? id));
  const linkButtons = h("div", { class: "inline", id: "link-providers" });
  const verifyFirst = h(
    "p",
    { class: "hint muted", id: "link-verify-first", hidden: true },
    "Confirm your email address first: a provider is linked only to a confirmed address.",
  );

  const unlinkButton = (account: LinkedAccount, name: string): HTMLButtonElement => {
    const button = h("button", { type: "button", class: "secondary small", "aria-label": `Unlink ${name}` }, "Unlink");
    button.addEventListener("click", () => {
      button.disabled = true;
      ctx.client.auth
        .unlinkAccount({ accountId: account.id })
        .then(() => list.reload())
        .then(() => ctx.showNotice(`${name} is unlinked: it no longer signs you in.`))
        .catch((e: unknown) => {
          button.disabled = false;
          ctx.showError(e);
        });
    });
    return button;
  };

  const row = (account: LinkedAccount): HTMLElement => {
    const name = nameOf(account.providerId);
    const password = account.providerId === PASSWORD;
    const action = password
      ? null
      : linkedCount > 1
        ? unlinkButton(account, name)
        : h("span", { class: "muted" }, "Your only way to sign in");
    return h(
      "li",
      { "data-id": account.id, "data-provider": account.providerId },
      h("span", { class: "grow" }, h("strong", {}, name)),
      h("span", { class: "muted" }, password ? "With your email address" : `Linked ${new Date(account.createdAt).toLocaleDateString()}`),
      action,
    );
  };

  const startLink = (provider: SocialProviderInfo, button: HTMLButtonElement) => {
    button.disabled = true;
    ctx.client.auth
      .linkSocial({ provider: provider.id, callbackURL: linkedLanding(provider.id), errorCallbackURL: linkErrorLanding() })
      .then((url) => location.assign(url))
      .catch((e: unknown) => {
        button.disabled = false;
        ctx.showError(e);
      });
  };

  const showLinkButtons = (accounts: LinkedAccount[]) => {
    const linked = new Set(accounts.map((a) => a.providerId));
    const buttons = providers
      .filter((p) => !linked.has(p.id))
      .map((provider) => {
        const button = h("button", { type: "button", class: "secondary", "data-provider": provider.id }, `Link ${provider.name}`);
        button.addEventListener("click", () => startLink(provider, button));
        return button;
      });
    replace(linkButtons, ...buttons);
    linkButtons.hidden = buttons.length === 0;
    verifyFirst.hidden = buttons.length === 0 || ctx.user?.emailVerified !== false;
  };

  const list = pagedList<LinkedAccount>({
    id: "linked-accounts",
    empty: "No way to sign in is linked.",
    load: async () => {
      // No providers offered (or their list failing) leaves the password's row alone, as on the sign-in page.
      const [accounts, offered] = await Promise.all([ctx.client.auth.listAccounts(), ctx.client.auth.providers().catch(() => [])]);
      providers = offered;
      linkedCount = accounts.length;
      showLinkButtons(accounts);
      return { items: accounts, nextCursor: null };
    },
    row,
  });
  list
    .reload()
    .then(() => {
      if (landed && providers.some((p) => p.id === landed)) ctx.showNotice(`${nameOf(landed)} is linked: you can sign in with it.`);
    })
    .catch((e: unknown) => ctx.showError(e));

  const element = h(
    "section",
    { id: "linked-section", class: "card", "aria-labelledby": "linked-section-title" },
    h("h2", { id: "linked-section-title" }, "Linked sign-in methods"),
    list.element,
    verifyFirst,
    linkButtons,
  );
  return { element, stop: () => list.stop() };
}
