import "../organizations.css";
import type { SecurityEventView } from "@app/contracts";
import type { View } from "../context.js";
import { h } from "../dom.js";
import { pagedList } from "../paged-list.js";
import { deviceName } from "./sessions.js";

/** Whose log a line is read in: the user's own (second person) or an admin's (about the user). */
export type Perspective = "own" | "admin";

/** How a sign-in or second step went, in words ("with a passkey"). */
const METHOD_WORDS: Record<string, string> = {
  password: "with a password",
  provider: "with a sign-in provider",
  social: "with a sign-in provider",
  passkey: "with a passkey",
  "magic-link": "with an emailed link",
  "email-otp": "with an emailed code",
  totp: "with an authenticator app code",
  otp: "with an emailed code",
  "backup-code": "with a backup code",
};

/** The method's words, or none for a method this page does not know. */
export function methodWords(method: string | undefined): string {
  return method ? (METHOD_WORDS[method] ?? "") : "";
}

const count = (n: unknown, one: string, many: string) => (typeof n === "number" && n !== 1 ? `${n} ${many}` : `1 ${one}`);

/** What happened, in plain words: "Signed in with a passkey", "An admin started acting as you". */
export function eventWords(event: Pick<SecurityEventView, "type" | "method" | "detail">, perspective: Perspective = "own"): string {
  const how = methodWords(event.method);
  const withHow = (text: string) => (how ? `${text} ${how}` : text);
  const detail = event.detail ?? {};
  const you = perspective === "own" ? "you" : "the user";
  switch (event.type) {
    case "sign_up":
      return "Account created";
    case "sign_in":
      return withHow("Signed in");
    case "sign_in_failed":
      return withHow("Sign-in failed");
    case "sign_out":
      return "Signed out";
    case "session_revoked":
      return `Signed out of ${count(detail.count, "session", "sessions")}`;
    case "password_changed":
      return "Password changed";
    case "password_reset":
      return "Password reset";
    case "email_changed":
      return "Email address changed";
    case "email_verified":
      return "Email address verified";
    case "two_factor_enabled":
      return "Two-factor authentication turned on";
    case "two_factor_disabled":
      return "Two-factor authentication turned off";
    case "passkey_added":
      return "Passkey added";
    case "passkey_removed":
      return "Passkey removed";
    case "account_deleted":
      return "Account deleted";
    case "user_banned":
      return detail.lifted === true ? "Suspension lifted" : "Account suspended";
    case "impersonation_started":
      return `An admin started acting as ${you}`;
    case "impersonation_stopped":
      return `An admin stopped acting as ${you}`;
    case "role_changed":
      return detail.role === "admin" ? "Admin role given" : "Admin role taken away";
    case "oauth_consent_granted":
      return "App authorized";
    case "oauth_consent_revoked":
      return "App authorization revoked";
    case "key_rotated":
      return detail.step === "retired" ? "Signing key retired" : "Signing key made";
  }
}

/** Where the request came from: an address and a short device name, or that there was no request. */
export function whereWords(event: Pick<SecurityEventView, "ip" | "userAgent">): string {
  if (!event.ip && !event.userAgent) return "No request (done by the service itself)";
  const device = event.userAgent ? deviceName(event.userAgent) : "";
  return [device, event.ip ? `from ${event.ip}` : ""].filter(Boolean).join(" ");
}

/** One event's row: what, when, where, the outcome, and who acted when it was an admin. */
export function eventRow(event: SecurityEventView, perspective: Perspective, extra: HTMLElement[] = []): HTMLElement {
  const failed = event.outcome === "failure";
  return h(
    "li",
    { "data-id": event.id, "data-type": event.type, "data-outcome": event.outcome },
    h(
      "div",
      { class: "grow" },
      h("strong", {}, eventWords(event, perspective)),
      h(
        "p",
        { class: "muted" },
        h("time", { datetime: event.createdAt }, new Date(event.createdAt).toLocaleString()),
        " · ",
        h("span", { title: event.userAgent ?? "" }, whereWords(event)),
      ),
      ...extra,
    ),
    event.actorId && perspective === "own" ? h("span", { class: "pill" }, "by an admin") : null,
    h("span", { class: failed ? "pill danger" : "pill" }, failed ? "failed" : "succeeded"),
  );
}

/** Account → Security activity: the user's own security events, newest first, a page at a time. */
export const activityView: View = (ctx, root) => {
  const list = pagedList<SecurityEventView>({
    id: "activity",
    empty: "Nothing recorded yet.",
    load: async (cursor) => {
      const page = await ctx.client.auth.events.list({ cursor });
      return { items: page.events, nextCursor: page.nextCursor };
    },
    row: (event) => eventRow(event, "own"),
  });
  root.append(
    h("h1", {}, "Security activity"),
    h("p", {}, h("a", { href: "#/account", id: "activity-back" }, "Back to the account")),
    h(
      "p",
      { class: "muted", id: "activity-about" },
      "Sign-ins, changes to how you sign in, and what an admin did to your account, newest first. Something you do not recognise? Change your password and sign out everywhere else.",
    ),
    list.element,
  );
  void list.reload();
  return () => list.stop();
};
