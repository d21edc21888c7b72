import type { ListedSession } from "@app/contracts";
import type { View } from "../context.js";
import { h, replace } from "../dom.js";
import { sessionEndWords } from "../session.js";

/** A short device name from a user agent ("Chrome on Linux"); the raw string is the title. */
export function deviceName(userAgent: string | null): string {
  if (!userAgent) return "Unknown device";
  const browser = /Edg\//.test(userAgent)
    ? "Edge"
    : /Firefox\//.test(userAgent)
      ? "Firefox"
      : /Chrom(e|ium)\//.test(userAgent)
        ? "Chrome"
        : /Safari\//.test(userAgent)
          ? "Safari"
          : "A browser or app";
  const system = /Android/.test(userAgent)
    ? "Android"
    : /iPhone|iPad/.test(userAgent)
      ? "iOS"
      : /Windows/.test(userAgent)
        ? "Windows"
        : /Mac OS X/.test(userAgent)
          ? "macOS"
          : /Linux/.test(userAgent)
            ? "Linux"
            : "";
  return system ? `${browser} on ${system}` : browser;
}

const when = (iso: string) => new Date(iso).toLocaleString();

/** Sessions: where the account is signed in, the current one marked; sign out one or all others. */
export const sessionsView: View = (ctx, root) => {
  const words = sessionEndWords(ctx.sessionRecheckSeconds);
  const list = h("ul", { id: "sessions", class: "list", "aria-label": "Sessions" });
  const othersButton = h("button", { type: "button", id: "revoke-others", class: "secondary" }, "Sign out everywhere else");
  let alive = true;

  const row = (session: ListedSession): HTMLElement => {
    const label = deviceName(session.userAgent);
    const signOut = session.current
      ? h("span", { class: "status", id: "current-session" }, "This device")
      : h(
          "button",
          { type: "button", class: "secondary small", "aria-label": `Sign out ${label}, signed in ${when(session.createdAt)}` },
          "Sign out",
        );
    if (signOut instanceof HTMLButtonElement) {
      signOut.addEventListener("click", () => {
        signOut.disabled = true;
        ctx.client.auth
          .revokeSession({ id: session.id })
          .then(load)
          .then(() => ctx.showNotice(`${label} is signed out. ${words.app}`))
          .catch((e: unknown) => {
            signOut.disabled = false;
            ctx.showError(e);
          });
      });
    }
    return h(
      "li",
      { "data-session-id": session.id, ...(session.current ? { "data-current": "true" } : {}) },
      h("span", { class: "grow" }, h("strong", { title: session.userAgent ?? "" }, label)),
      h("span", { class: "muted" }, `Signed in ${when(session.createdAt)}${session.ipAddress ? ` from ${session.ipAddress}` : ""}`),
      signOut,
    );
  };

  const load = async (): Promise<void> => {
    const sessions = await ctx.client.auth.listSessions();
    if (!alive) return;
    // The current session first, then the newest.
    sessions.sort((a, b) => Number(b.current) - Number(a.current) || b.createdAt.localeCompare(a.createdAt));
    replace(list, ...sessions.map(row));
    othersButton.hidden = sessions.length < 2;
    list.dataset.loaded = "true";
  };

  othersButton.addEventListener("click", () => {
    othersButton.disabled = true;
    ctx.client.auth
      .revokeOtherSessions()
      .then(load)
      .then(() => ctx.showNotice(`Every other session is signed out. ${words.app}`))
      .catch((e: unknown) => ctx.showError(e))
      .finally(() => {
        othersButton.disabled = false;
      });
  });

  root.append(
    h("h1", {}, "Sessions"),
    h("p", { class: "muted" }, `Where your account is signed in. Signing a session out ends it. ${words.app}`),
    h("p", { class: "muted", id: "token-words" }, words.token),
    list,
    h("div", { class: "inline" }, othersButton, h("a", { href: "#/account" }, "Back to the account")),
  );
  load().catch((e: unknown) => ctx.showError(e));
  return () => {
    alive = false;
  };
};
