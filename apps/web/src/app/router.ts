/** The pages of the app. */
export const ROUTE_NAMES = [
  "signin",
  "tasks",
  "task",
  "upload",
  "generate",
  "projects",
  "agents",
  "chats",
  "chat",
  "mcp",
  "settings",
  "admin",
  "forgot-password",
  "reset-password",
  "account",
  "sessions",
  "security",
  "two-factor",
  "organization",
  "accept-invitation",
  "admin-users",
  "admin-user",
  "oauth-consent",
  "authorized-apps",
  "activity",
  "admin-events",
  "admin-webhooks",
] as const;

/** A parsed hash route. */
export interface Route {
  name: (typeof ROUTE_NAMES)[number];
  params: Record<string, string>;
}

/** Pages reached with no id in the hash. */
const SIMPLE = new Set<string>([
  "signin",
  "upload",
  "generate",
  "projects",
  "agents",
  "mcp",
  "settings",
  "admin",
  "forgot-password",
  "account",
  "sessions",
  "security",
  "two-factor",
  "organization",
  "authorized-apps",
  "activity",
]);

/** Pages open without a session (the others send a signed-out visitor to sign-in). */
export const PUBLIC_ROUTES = new Set<Route["name"]>([
  "signin",
  "forgot-password",
  "reset-password",
  "two-factor",
  "accept-invitation",
  "oauth-consent",
]);

/**
 * Where an invitation mail's link lands (identity's invitation mail: `<web origin>/accept-invitation/<id>`);
 * the static server answers index.html for it and {@link landingHash} turns it into the page's hash.
 */
export const ACCEPT_INVITATION_PATH = "/accept-invitation";

/**
 * Identity's page of the second-factor step (apps/identity/src/sign-in/finish.ts TWO_FACTOR_PAGE):
 * a sign-in that ends in a redirect (a provider, a magic link) and needs a second factor lands
 * there, with `?callbackURL=` naming where it was going.
 */
export const TWO_FACTOR_PATH = "/sign-in/two-factor";

/**
 * The sign-in page identity's authorization server sends a browser without a session to
 * (apps/identity/src/oauth-provider/settings.ts WEB_PAGES), with `?callbackURL=` naming its
 * interaction step, where the browser goes once signed in (authorization-return.ts).
 */
export const SIGN_IN_PATH = "/sign-in";

/**
 * The consent page of an authorization request (WEB_PAGES.consent): its query is identity's
 * signed one, kept as it came in the hash route `#/oauth/consent?<query>` (views/oauth-consent.ts).
 */
export const CONSENT_PATH = "/oauth/consent";

/**
 * Parses `location.hash` (`#/tasks/abc` → task abc, `#/chats/abc` → chat abc). Unknown routes
 * are the task list. The reset page keeps its link's `?token=` or `?error=` as params.
 */
export function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, "").split("?")[0]?.split("/").filter(Boolean).map(decodeURIComponent) ?? [];
  const [head, id] = parts;
  if (head === "reset-password") {
    const query = new URLSearchParams(hash.split("?")[1] ?? "");
    const params: Record<string, string> = {};
    for (const key of ["token", "error"]) {
      const value = query.get(key);
      if (value) params[key] = value;
    }
    return { name: "reset-password", params };
  }
  if (head === "oauth" && id === "consent") {
    const at = hash.indexOf("?");
    return { name: "oauth-consent", params: { query: at < 0 ? "" : hash.slice(at + 1) } };
  }
  if (head === "tasks" && id) return { name: "task", params: { id } };
  if (head === "accept-invitation" && id) return { name: "accept-invitation", params: { id } };
  if (head === "admin" && id === "events") return { name: "admin-events", params: {} };
  if (head === "admin" && id === "webhooks") return { name: "admin-webhooks", params: {} };
  if (head === "admin" && id === "users") {
    const user = parts[2];
    return user ? { name: "admin-user", params: { id: user } } : { name: "admin-users", params: {} };
  }
  if (head === "chats") return id ? { name: "chat", params: { id } } : { name: "chats", params: {} };
  if (head && SIMPLE.has(head)) return { name: head as Route["name"], params: {} };
  return { name: "tasks", params: {} };
}

/** The hash of a task's page. */
export function taskHref(id: string): string {
  return `#/tasks/${encodeURIComponent(id)}`;
}

/** The hash of an invitation's page. */
export function invitationHref(id: string): string {
  return `#/accept-invitation/${encodeURIComponent(id)}`;
}

/** The hash of a user's page in the admin area. */
export function adminUserHref(id: string): string {
  return `#/admin/users/${encodeURIComponent(id)}`;
}

/** The hash of a consent page with identity's signed query string (without its `?`). */
export function consentHref(query: string): string {
  return `#${CONSENT_PATH}?${query}`;
}

/** The hash of a chat's page. */
export function chatHref(id: string): string {
  return `#/chats/${encodeURIComponent(id)}`;
}

/**
 * The hash route for a page the service links to by path: identity's reset link redirects to
 * `<web origin>/reset-password?token=…` (the static server answers index.html for it), which is
 * the reset page `#/reset-password?token=…`; the API's MCP callback sends the browser back with
 * `?mcp=connected|error&serverId=&code=` (docs/mcp.md), which the MCP page reads from
 * `#/mcp?mcp=…`; a redirecting sign-in that needs a second factor lands on {@link TWO_FACTOR_PATH},
 * which is `#/two-factor` (its `callbackURL` is this app's start, where the page goes anyway); an
 * invitation mail's `/accept-invitation/<id>` is `#/accept-invitation/<id>`; the authorization
 * server's {@link CONSENT_PATH} is `#/oauth/consent?<its query, unchanged>` and its
 * {@link SIGN_IN_PATH} is `#/signin` (main.ts keeps its `callbackURL` aside first).
 * Undefined for every other landing.
 */
export function landingHash(pathname: string, search: string): string | undefined {
  const path = pathname.replace(/\/+$/, "");
  if (path === "/reset-password") return `#/reset-password${search}`;
  if (path === TWO_FACTOR_PATH) return "#/two-factor";
  if (path === CONSENT_PATH) return `#${CONSENT_PATH}${search}`;
  if (path === SIGN_IN_PATH) return "#/signin";
  if (path.startsWith(`${ACCEPT_INVITATION_PATH}/`)) {
    const id = path.slice(ACCEPT_INVITATION_PATH.length + 1);
    if (id && !id.includes("/")) return `#${ACCEPT_INVITATION_PATH}/${id}`;
  }
  const query = new URLSearchParams(search);
  if (!query.has("mcp")) return undefined;
  const kept = new URLSearchParams();
  for (const key of ["mcp", "serverId", "code"]) {
    const value = query.get(key);
    if (value) kept.set(key, value);
  }
  return `#/mcp?${kept}`;
}
