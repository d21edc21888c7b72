import "./styles.css";
import { ApiError, createClient } from "@app/client";
import { resolveApiBaseUrl } from "./config.js";
import type { AppContext, CurrentUser, View } from "./context.js";
import { h, replace } from "./dom.js";
import { describeError } from "./messages.js";
import { landingHash, PUBLIC_ROUTES, parseRoute, type Route } from "./router.js";
import { landingMessage, renderVerifyBanner } from "./verify-banner.js";
import { accountView } from "./views/account.js";
import { adminView } from "./views/admin.js";
import { agentsView } from "./views/agents.js";
import { authView } from "./views/auth.js";
import { chatView } from "./views/chat.js";
import { chatsView } from "./views/chats.js";
import { generateView } from "./views/generate.js";
import { mcpView } from "./views/mcp.js";
import { projectsView } from "./views/projects.js";
import { forgotPasswordView, resetPasswordView } from "./views/recovery.js";
import { sessionsView } from "./views/sessions.js";
import { settingsView } from "./views/settings.js";
import { taskView } from "./views/task.js";
import { tasksView } from "./views/tasks.js";
import { uploadView } from "./views/upload.js";

declare global {
  interface Window {
    __CONFIG__?: unknown;
  }
}

const VIEWS: Record<Route["name"], View> = {
  signin: authView,
  tasks: tasksView,
  task: taskView,
  upload: uploadView,
  generate: generateView,
  projects: projectsView,
  agents: agentsView,
  chats: chatsView,
  chat: chatView,
  mcp: mcpView,
  settings: settingsView,
  admin: adminView,
  "forgot-password": forgotPasswordView,
  "reset-password": resetPasswordView,
  account: accountView,
  sessions: sessionsView,
};

/** Page titles, so each route is announced and tabs are told apart. */
const TITLES: Record<Route["name"], string> = {
  signin: "Sign in",
  tasks: "Tasks",
  task: "Task",
  upload: "Upload",
  generate: "Generate",
  projects: "Projects",
  agents: "Agents",
  chats: "Chats",
  chat: "Chat",
  mcp: "MCP servers",
  settings: "Settings",
  admin: "Admin",
  "forgot-password": "Forgot password",
  "reset-password": "Reset password",
  account: "Account",
  sessions: "Sessions",
};

const LINKS: [string, string, string][] = [
  ["#/tasks", "nav-tasks", "Tasks"],
  ["#/projects", "nav-projects", "Projects"],
  ["#/agents", "nav-agents", "Agents"],
  ["#/chats", "nav-chats", "Chats"],
  ["#/mcp", "nav-mcp", "MCP"],
  ["#/upload", "nav-upload", "Upload"],
  ["#/generate", "nav-generate", "Generate"],
  ["#/settings", "nav-settings", "Settings"],
  ["#/account", "nav-account", "Account"],
];

const root = document.getElementById("app") ?? document.body;
const client = createClient({ baseUrl: resolveApiBaseUrl(window.__CONFIG__, import.meta.env.VITE_API_BASE_URL) });
const alertBox = h("div", { id: "alert", role: "alert", class: "alert", hidden: true });
const noticeBox = h("div", { id: "notice", role: "status", class: "notice-bar" });
const banner = h("div", { id: "verify-banner", class: "banner", role: "region", "aria-label": "Email verification", hidden: true });
const main = h("main", { id: "view" });
const nav = h("nav", { class: "nav", "aria-label": "Main" });
let cleanup: (() => void) | undefined;
/** A notice for the page the next render opens (set by `navigate(route, notice)`). */
let pendingNotice: string | undefined;

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
  navigate(route, notice) {
    pendingNotice = notice;
    if (location.hash === route) render();
    else location.hash = route;
  },
  signedIn(user) {
    ctx.user = user;
    void probeAdmin().then((admin) => {
      ctx.isAdmin = admin;
      renderNav();
    });
    ctx.navigate("#/tasks");
  },
  signedOut(notice) {
    ctx.user = null;
    ctx.isAdmin = false;
    ctx.navigate("#/signin", notice);
  },
  showError(error) {
    alertBox.textContent = describeError(error);
    alertBox.hidden = false;
  },
  showNotice(text) {
    noticeBox.textContent = text;
  },
};

function renderNav(): void {
  const user = ctx.user;
  if (!user) {
    replace(nav, h("span", { class: "brand" }, "Taskboard"));
    return;
  }
  const signOut = async () => {
    ctx.user = null; // first, so the token listener below does not report an ended session
    ctx.isAdmin = false;
    await client.auth.signOut().catch((e: unknown) => ctx.showError(e));
    ctx.navigate("#/signin");
  };
  const current = `#/${location.hash.replace(/^#\/?/, "").split(/[/?]/)[0] ?? ""}`;
  const link = ([href, id, text]: [string, string, string]) =>
    h("a", { href, id, ...(current === href ? { "aria-current": "page" } : {}) }, text);
  replace(
    nav,
    h("span", { class: "brand" }, "Taskboard"),
    h("div", { class: "nav-links" }, ...LINKS.map(link), ctx.isAdmin ? link(["#/admin", "nav-admin", "Admin"]) : null),
    h(
      "div",
      { class: "nav-user" },
      h("span", { id: "whoami", class: "muted" }, user.email ?? user.id),
      h("button", { id: "sign-out", type: "button", class: "secondary", onclick: () => void signOut() }, "Sign out"),
    ),
  );
}

function render(): void {
  cleanup?.();
  cleanup = undefined;
  alertBox.hidden = true;
  noticeBox.textContent = "";
  let route = parseRoute(location.hash);
  if (!ctx.user && !PUBLIC_ROUTES.has(route.name)) route = { name: "signin", params: {} };
  if (ctx.user && route.name === "signin") route = { name: "tasks", params: {} };
  renderNav();
  renderVerifyBanner(ctx, banner);
  replace(main);
  main.dataset.view = route.name;
  document.title = `${TITLES[route.name]} · Taskboard`;
  cleanup = VIEWS[route.name](ctx, main, route.params) ?? undefined;
  if (pendingNotice) ctx.showNotice(pendingNotice);
  pendingNotice = undefined;
}

// The stored JWT vanished (sign-out, or a 401 that get-session could not cure): back to sign-in.
client.auth.onTokenChange((token) => {
  if (token || !ctx.user) return;
  ctx.user = null;
  ctx.isAdmin = false;
  render();
  ctx.showError(new ApiError(401, "unauthorized", "session ended"));
});

/**
 * A page reached from a mailed link: identity redirects to `/reset-password?token=…` (the reset
 * page's hash route) or to `/?verified=1`-like callbacks. The query leaves the address bar, so a
 * token is not kept in history or sent on as a referrer.
 */
function takeLanding(): ReturnType<typeof landingMessage> {
  const hash = landingHash(location.pathname, location.search);
  const message = hash ? {} : landingMessage(location.search);
  if (hash || location.search) history.replaceState(null, "", `/${hash ?? location.hash}`);
  return message;
}

async function boot(): Promise<void> {
  replace(root, h("header", {}, nav), alertBox, noticeBox, banner, main);
  const landing = takeLanding();
  let problem: unknown;
  try {
    // Back from a provider: the session cookie exists, the JWT not yet; the contract's step 2
    // (get-session, awaited before any business call) stores it.
    if (landing.provider) await client.auth.getSession();
    // With a stored JWT, or a still-valid session cookie (the client asks get-session on 401).
    const me: CurrentUser = await client.me();
    // get-session (GET, which leaves the JWT alone) tells whether the address is verified.
    const current = await client.auth.currentSession().catch(() => null);
    ctx.user =
      current?.user.id === me.id
        ? { ...me, email: current.user.email, name: current.user.name, emailVerified: current.user.emailVerified }
        : me;
    ctx.isAdmin = await probeAdmin();
  } catch (error) {
    if (!(error instanceof ApiError && error.unauthorized)) problem = error;
  }
  window.addEventListener("hashchange", render);
  render();
  if (landing.notice) ctx.showNotice(ctx.user ? landing.notice : `${landing.notice} Sign in to continue.`);
  if (landing.error) ctx.showError(landing.error);
  if (problem) ctx.showError(problem);
  document.body.dataset.ready = "true";
}

void boot();
