import "../organizations.css";
import type { ManagedSession, ManagedUser } from "@app/contracts";
import { confirmAction } from "../confirm.js";
import type { AppContext, View } from "../context.js";
import { field, h, replace } from "../dom.js";
import { formSummary, labelled, onSubmit } from "../forms.js";
import { adminNav, adminRefusal, userPills } from "./admin-users.js";
import { deviceName } from "./sessions.js";

/** How long a suspension lasts: the choices of the form, in seconds ("" until it is lifted). */
export const BAN_LENGTHS: [string, string][] = [
  ["", "Until it is lifted"],
  [String(60 * 60), "1 hour"],
  [String(24 * 60 * 60), "1 day"],
  [String(7 * 24 * 60 * 60), "7 days"],
  [String(30 * 24 * 60 * 60), "30 days"],
];

const when = (iso: string) => new Date(iso).toLocaleString();

/** Whether the account is suspended and until when, in words. */
export function banWords(user: Pick<ManagedUser, "banned" | "banReason" | "banExpires">): string {
  if (!user.banned) return "Active: the account can sign in.";
  const until = user.banExpires ? `until ${when(user.banExpires)}` : "until an admin lifts it";
  return `Suspended ${until}${user.banReason ? `. Reason: ${user.banReason}` : ""}.`;
}

/** What a suspension does, said where an admin suspends. */
const BAN_EFFECT =
  "Their sessions end now and signing in is refused until the suspension ends. A token this app already handed out keeps working until it expires.";

function banSection(ctx: AppContext, user: ManagedUser, reload: (notice: string) => Promise<void>): HTMLElement {
  const section = h(
    "section",
    { id: "user-ban", class: "card admin-section", "aria-labelledby": "user-ban-title" },
    h("h2", { id: "user-ban-title" }, "Suspension"),
    h("p", { id: "user-ban-status" }, banWords(user)),
  );
  if (user.banned) {
    const lift = h("button", { type: "button", id: "unban-user", class: "secondary" }, "Lift the suspension");
    lift.addEventListener("click", () => {
      lift.disabled = true;
      ctx.client.auth.admin
        .unbanUser({ userId: user.id })
        .then(() => reload(`${user.email} can sign in again.`))
        .catch((error: unknown) => {
          lift.disabled = false;
          ctx.showError(error);
        });
    });
    section.append(h("div", { class: "inline" }, lift));
    return section;
  }
  const form = h(
    "form",
    { id: "ban-form", class: "stack", novalidate: true, "aria-label": "Suspend the account" },
    labelled("Reason (optional)", h("input", { name: "reason", maxlength: 500, autocomplete: "off" }), {
      hint: "Kept with the account for admins; the user is not shown it.",
    }),
    labelled("For how long", h("select", { name: "length" }, ...BAN_LENGTHS.map(([value, text]) => h("option", { value }, text)))),
    h("p", { class: "muted" }, BAN_EFFECT),
    h("div", { class: "inline" }, h("button", { type: "submit", class: "danger" }, "Suspend the account")),
    formSummary(),
  );
  onSubmit(form, async () => {
    if (!(await confirmAction(`Suspend ${user.email}?`, "Suspend"))) return;
    const reason = field(form, "reason").trim();
    const length = field(form, "length");
    await ctx.client.auth.admin.banUser({
      userId: user.id,
      ...(reason ? { banReason: reason } : {}),
      ...(length ? { banExpiresIn: Number(length) } : {}),
    });
    await reload(`${user.email} is suspended: their sessions ended, and signing in is refused.`);
  });
  section.append(form);
  return section;
}

function sessionsSection(
  ctx: AppContext,
  user: ManagedUser,
  sessions: ManagedSession[],
  reload: (notice: string) => Promise<void>,
): HTMLElement {
  const row = (session: ManagedSession) => {
    const label = deviceName(session.userAgent);
    const end = h(
      "button",
      { type: "button", class: "secondary small", "aria-label": `Sign out ${label}, signed in ${when(session.createdAt)}` },
      "Sign out",
    );
    end.addEventListener("click", () => {
      end.disabled = true;
      ctx.client.auth.admin
        .revokeUserSession({ sessionToken: session.token })
        .then(() => reload(`${label} of ${user.email} is signed out.`))
        .catch((error: unknown) => {
          end.disabled = false;
          ctx.showError(error);
        });
    });
    return h(
      "li",
      { "data-session-id": session.id },
      h(
        "div",
        { class: "grow" },
        h("strong", { title: session.userAgent ?? "" }, label),
        h("p", { class: "muted" }, `Signed in ${when(session.createdAt)}${session.ipAddress ? ` from ${session.ipAddress}` : ""}`),
      ),
      session.impersonatedBy ? h("span", { class: "pill" }, "impersonation") : null,
      end,
    );
  };
  const all = h("button", { type: "button", id: "revoke-user-sessions", class: "secondary" }, "Sign out everywhere");
  all.addEventListener("click", () => {
    all.disabled = true;
    ctx.client.auth.admin
      .revokeUserSessions({ userId: user.id })
      .then(() => reload(`Every session of ${user.email} is signed out.`))
      .catch((error: unknown) => {
        all.disabled = false;
        ctx.showError(error);
      });
  });
  return h(
    "section",
    { id: "user-sessions", class: "card admin-section", "aria-labelledby": "user-sessions-title" },
    h("h2", { id: "user-sessions-title" }, `Sessions (${sessions.length})`),
    sessions.length
      ? h("ul", { id: "user-session-list", class: "list" }, ...sessions.map(row))
      : h("p", { class: "muted", id: "user-session-list-empty" }, "Not signed in anywhere."),
    sessions.length ? h("div", { class: "inline" }, all) : null,
  );
}

function impersonateSection(ctx: AppContext, user: ManagedUser): HTMLElement | null {
  if (user.id === ctx.user?.id) return null;
  const act = h("button", { type: "button", id: "impersonate-user" }, "Act as this user");
  act.addEventListener("click", () => {
    act.disabled = true;
    ctx.client.auth.admin
      .impersonateUser({ userId: user.id })
      .then((signedIn) => ctx.switchedUser(signedIn, "#/tasks", `You are acting as ${user.email}.`))
      .catch((error: unknown) => {
        act.disabled = false;
        ctx.showError(error);
      });
  });
  return h(
    "section",
    { id: "user-impersonate", class: "card admin-section", "aria-labelledby": "user-impersonate-title" },
    h("h2", { id: "user-impersonate-title" }, "Act as this user"),
    h(
      "p",
      { class: "muted" },
      "See the app as this user sees it, to help them: for up to an hour, everything you do is done as them, and a banner says so on every page. “Stop impersonating” brings your own session back.",
    ),
    h("div", { class: "inline" }, act),
  );
}

/** Admin → one user: their role and state, suspending and lifting it, their sessions, and acting as them. */
export const adminUserView: View = (ctx, root, params) => {
  const id = params.id ?? "";
  const title = h("h1", {}, "User");
  const body = h("div", { id: "admin-user-body", class: "stack", "data-state": "loading" }, h("p", { class: "muted" }, "Loading…"));
  root.append(title, adminNav("users"), body);
  let alive = true;
  const load = async (notice?: string): Promise<void> => {
    const [user, sessions] = await Promise.all([ctx.client.auth.admin.getUser(id), ctx.client.auth.admin.listUserSessions({ userId: id })]);
    if (!alive) return;
    title.textContent = user.name || user.email;
    const reload = (next: string) => load(next);
    replace(
      body,
      h(
        "section",
        { id: "user-summary", class: "card admin-section", "aria-labelledby": "user-summary-title" },
        h("h2", { id: "user-summary-title", class: "visually-hidden" }, "Account"),
        h("p", {}, h("strong", {}, user.email), " ", ...userPills(user)),
        h("p", { class: "muted" }, `Role: ${user.role}. Account created ${when(user.createdAt)}.`),
      ),
      banSection(ctx, user, reload),
      sessionsSection(ctx, user, sessions, reload),
      impersonateSection(ctx, user),
    );
    body.dataset.state = "ready";
    body.dataset.banned = String(user.banned);
    if (notice) ctx.showNotice(notice);
  };
  load().catch((error: unknown) => {
    if (alive) adminRefusal(ctx, body, error);
  });
  return () => {
    alive = false;
  };
};
