import "./styles.css";
import { createClient } from "@app/client";
import { continueAuthorization, holdAuthorizationLanding, takeAuthorizationReturn } from "./authorization-return.js";
import { resolveApiBaseUrl, resolveSessionRecheckSeconds } from "./config.js";
import type { AppContext, CurrentUser } from "./context.js";
import { h, replace } from "./dom.js";
import { organizationSwitcher, renderImpersonationBanner } from "./header.js";
import { describeError } from "./messages.js";
import { LINKS, TITLES, VIEWS } from "./pages.js";
import { landingHash, PUBLIC_ROUTES, parseRoute } from "./router.js";
import { endsSession, reportSessionEnd, SESSION_ENDED, setSessionEndHandler } from "./session.js";
import { landingMessage, renderVerifyBanner } from "./verify-banner.js";

declare global {
  interface Window {
    __CONFIG__?: unknown;
  }
}

const root = document.getElementById("app") ?? document.body;
const client = createClient({ baseUrl: resolveApiBaseUrl(window.__CONFIG__, import.meta.env.VITE_API_BASE_URL) });
const alertBox = h("div", { id: "alert", role: "alert", class: "alert", hidden: true });
const noticeBox = h("div", { id: "notice", role: "status", class: "notice-bar" });
const banner = h("div", { id: "verify-banner", class: "banner", role: "region", "aria-label": "Email verification", hidden: true });
const actingBanner = h("div", {
  id: "impersonation-banner",
  class: "banner impersonating",
  role: "region",
  "aria-label": "Impersonation",
  hidden: true,
});
const main = h("main", { id: "view" });
const nav = h("nav", { class: "nav", "aria-label": "Main" });
let cleanup: (() => void) | undefined;
/** The hash the page last rendered: a `hashchange` for it (queued behind a direct render) is no news. */
let rendered: string | undefined;
/** A notice for the page the next render opens (set by `navigate(route, notice)`). */
let pendingNotice: string | undefined;
/** A problem for the page the next render opens (the signed-out page's "Your session has ended"). */
let pendingError: unknown;
/** Whether get-session itself said, as the page started, that the cookie session holds (not the stored JWT alone). */
let sessionConfirmed = false;

/** Where the next sign-in goes (ctx.returnAfterSignIn), kept per tab so a sign-in that reloads the page still finds it. */
const RETURN_KEY = "web.afterSignIn";

function takeReturn(): string | undefined {
  try {
    const route = sessionStorage.getItem(RETURN_KEY);
    sessionStorage.removeItem(RETURN_KEY);
    return route?.startsWith("#/") ? route : undefined;
  } catch {
    return undefined;
  }
}

/** Asks the admin route once: the only way to learn the role while /api/me reports none. */
async function probeAdmin(): Promise<boolean> {
  try {
    await client.admin.users({ limit: 1 });
    return true;
  } catch {
    return false;
  }
}

const ctx: AppContext = {
  client,
  user: null,
  isAdmin: false,
  activeOrganizationId: null,
  organizations: [],
  impersonatedBy: null,
  sessionRecheckSeconds: resolveSessionRecheckSeconds(window.__CONFIG__),
  navigate(route, notice) {
    pendingNotice = notice;
    if (location.hash === route) render();
    else location.hash = route;
  },
  signedIn(user) {
    ctx.user = user;
    const authorization = takeAuthorizationReturn();
    if (authorization) return continueAuthorization(main, authorization);
    void probeAdmin().then((admin) => {
      ctx.isAdmin = admin;
      renderNav();
    });
    void ctx.refreshSession().catch(() => undefined);
    ctx.navigate(takeReturn() ?? "#/tasks");
  },
  async refreshSession() {
    const user = ctx.user;
    if (!user) return;
    const [current, organizations] = await Promise.all([client.auth.currentSession(), client.auth.organization.list()]);
    if (ctx.user !== user || !current) return;
    ctx.activeOrganizationId = current.session.activeOrganizationId ?? null;
    ctx.impersonatedBy = current.session.impersonatedBy ?? null;
    ctx.organizations = organizations;
    // The page stays as it is (it may be saying why an organization is gone); the next one follows.
    renderNav();
    renderImpersonationBanner(ctx, actingBanner);
  },
  async setActiveOrganization(id) {
    await client.auth.organization.setActive({ organizationId: id });
    ctx.activeOrganizationId = id;
    const name = ctx.organizations.find((org) => org.id === id)?.name;
    pendingNotice = id ? `You are working in ${name ?? "the organization"}.` : "You are working on your own.";
    render();
    document.getElementById("org-switcher")?.focus();
  },
  switchedUser({ user, session }, route, notice) {
    ctx.user = { id: user.id, email: user.email, name: user.name, emailVerified: user.emailVerified };
    ctx.impersonatedBy = session.impersonatedBy ?? null;
    ctx.activeOrganizationId = session.activeOrganizationId ?? null;
    ctx.organizations = [];
    ctx.isAdmin = false;
    void probeAdmin().then((admin) => {
      ctx.isAdmin = admin;
      renderNav();
    });
    void ctx.refreshSession().catch(() => undefined);
    ctx.navigate(route, notice);
  },
  returnAfterSignIn(route) {
    try {
      sessionStorage.setItem(RETURN_KEY, route);
    } catch {
      // Storage refused (private mode): the sign-in opens the task list.
    }
  },
  signedOut(notice) {
    enterSignedOut({ notice });
  },
  showError(error) {
    if (reportSessionEnd(error)) return;
    alertBox.textContent = describeError(error);
    alertBox.hidden = false;
  },
  showNotice(text) {
    noticeBox.textContent = text;
  },
};

/**
 * The one way into the signed-out state, from every page: the sign-out button, a finished reset
 * or deletion, the session watch (ended on another device, by a password change or reset, or a
 * deleted account) and any refusal that ends the session. The user is forgotten, the JWT dropped
 * (the SDK closes every stream and socket with it), the page's own streams stop as the route
 * changes, and sign-in opens with the header signed out.
 */
function enterSignedOut(next: { notice?: string; ended?: boolean }): void {
  ctx.user = null;
  ctx.isAdmin = false;
  ctx.activeOrganizationId = null;
  ctx.organizations = [];
  ctx.impersonatedBy = null;
  // A refusal met while identity did not answer leaves the JWT held: it is of no use any more.
  if (client.auth.token()) void client.auth.signOut().catch(() => undefined);
  pendingError = next.ended ? SESSION_ENDED : undefined;
  ctx.navigate("#/signin", next.notice);
}

// A session that ends while signed in, however it is found out: one signed-out state.
setSessionEndHandler((error) => {
  if (!ctx.user || !endsSession(error)) return false;
  enterSignedOut({ ended: true });
  return true;
});

function renderNav(): void {
  const user = ctx.user;
  if (!user) {
    replace(nav, h("span", { class: "brand" }, "Taskboard"));
    return;
  }
  const signOut = async () => {
    ctx.user = null; // first, so a session check finishing meanwhile reports nothing
    await client.auth.signOut().catch(() => undefined);
    enterSignedOut({});
  };
  const current = `#/${location.hash.replace(/^#\/?/, "").split(/[/?]/)[0] ?? ""}`;
  const link = ([href, id, text]: [string, string, string]) =>
    h("a", { href, id, ...(current === href ? { "aria-current": "page" } : {}) }, text);
  replace(
    nav,
    h("span", { class: "brand" }, "Taskboard"),
    h("div", { class: "nav-links" }, ...LINKS.map(link), ctx.isAdmin ? link(["#/admin", "nav-admin", "Admin"]) : null),
    organizationSwitcher(ctx),
    h(
      "div",
      { class: "nav-user" },
      h("span", { id: "whoami", class: "muted" }, user.email ?? user.id),
      h("button", { id: "sign-out", type: "button", class: "secondary", onclick: () => void signOut() }, "Sign out"),
    ),
  );
}

function render(): void {
  rendered = location.hash;
  cleanup?.();
  cleanup = undefined;
  alertBox.hidden = true;
  noticeBox.textContent = "";
  let route = parseRoute(location.hash);
  if (!ctx.user && !PUBLIC_ROUTES.has(route.name)) route = { name: "signin", params: {} };
  if (ctx.user && (route.name === "signin" || route.name === "two-factor")) route = { name: "tasks", params: {} };
  renderNav();
  renderVerifyBanner(ctx, banner);
  renderImpersonationBanner(ctx, actingBanner);
  replace(main);
  main.dataset.view = route.name;
  document.title = `${TITLES[route.name]} · Taskboard`;
  cleanup = VIEWS[route.name](ctx, main, route.params) ?? undefined;
  if (pendingNotice) ctx.showNotice(pendingNotice);
  if (pendingError) ctx.showError(pendingError);
  pendingNotice = undefined;
  pendingError = undefined;
}

/**
 * A page reached from a mailed link: identity redirects to `/reset-password?token=…` (the reset
 * page's hash route) or to `/?verified=1`-like callbacks. The query leaves the address bar, so a
 * token is not kept in history or sent on as a referrer.
 */
function takeLanding(): ReturnType<typeof landingMessage> {
  const hash = landingHash(location.pathname, location.search);
  holdAuthorizationLanding(location.pathname, location.search, client.baseUrl);
  // An invitation's page is where its verification link lands too (verify-banner.ts verifiedLanding).
  const message = hash && !hash.startsWith("#/accept-invitation/") ? {} : landingMessage(location.search);
  if (hash || location.search) history.replaceState(null, "", `/${hash ?? location.hash}`);
  return message;
}

/**
 * Who is signed in as the page starts: get-session first (the contract's step 2, awaited before
 * any business call), so a session that ended while the page was closed shows signed out, and a
 * provider's return or a confirmed address change gets its fresh JWT. When identity does not
 * answer, the stored JWT still counts (GET /api/me); only a definite "no session" signs out.
 */
async function startSession(): Promise<unknown> {
  const check = await client.auth.checkSession();
  if (check.status === "signed_in") {
    const { id, email, name, emailVerified } = check.session.user;
    ctx.user = { id, email, name, emailVerified };
    ctx.activeOrganizationId = check.session.session.activeOrganizationId ?? null;
    ctx.impersonatedBy = check.session.session.impersonatedBy ?? null;
    sessionConfirmed = true;
  } else if (check.status === "unknown") {
    if (!client.auth.token()) return check.error;
    try {
      const me: CurrentUser = await client.me();
      ctx.user = me;
    } catch (error) {
      return endsSession(error) ? undefined : error;
    }
  }
  if (ctx.user) {
    const [admin, organizations] = await Promise.all([probeAdmin(), client.auth.organization.list().catch(() => [])]);
    ctx.isAdmin = admin;
    ctx.organizations = organizations;
  }
  return undefined;
}

async function boot(): Promise<void> {
  replace(root, h("header", {}, nav), alertBox, noticeBox, actingBanner, banner, main);
  const landing = takeLanding();
  const problem = await startSession();
  // Signed in already (a provider's or a mailed link's return, or a sign-in in another tab): on to
  // the authorization request that waited, when get-session itself vouched for the session.
  const authorization = ctx.user && sessionConfirmed ? takeAuthorizationReturn() : undefined;
  if (authorization) return continueAuthorization(main, authorization);
  // A sign-in that left the page (a mailed link, a provider) comes back here: on to the page it was for.
  const back = ctx.user ? takeReturn() : undefined;
  if (back) history.replaceState(null, "", `/${back}`);
  // From now on the session is checked every SESSION_RECHECK_SECONDS and whenever the window
  // regains focus; a session ended elsewhere ends here the same way as the sign-out button.
  client.auth.watchSession({
    intervalMs: ctx.sessionRecheckSeconds * 1000,
    checkNow: false,
    onSignedOut: () => {
      if (ctx.user) enterSignedOut({ ended: true });
    },
  });
  window.addEventListener("hashchange", () => {
    if (location.hash !== rendered) render();
  });
  render();
  if (landing.notice) ctx.showNotice(ctx.user ? landing.notice : `${landing.notice} Sign in to continue.`);
  if (landing.error) ctx.showError(landing.error);
  if (problem) ctx.showError(problem);
  document.body.dataset.ready = "true";
}

void boot();
