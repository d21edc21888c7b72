import "./styles.css";
import { ApiError, createClient } from "@app/client";
import { resolveApiBaseUrl } from "./config.js";
import type { AppContext, CurrentUser, View } from "./context.js";
import { h, replace } from "./dom.js";
import { parseRoute, type Route } from "./router.js";
import { adminView } from "./views/admin.js";
import { authView } from "./views/auth.js";
import { generateView } from "./views/generate.js";
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
  admin: adminView,
};

const root = document.getElementById("app") ?? document.body;
const client = createClient({ baseUrl: resolveApiBaseUrl(window.__CONFIG__, import.meta.env.VITE_API_BASE_URL) });
const alertBox = h("div", { id: "alert", role: "alert", class: "alert", hidden: true });
const main = h("main", { id: "view" });
const nav = h("nav", { class: "nav" });
let cleanup: (() => void) | undefined;

const ctx: AppContext = {
  client,
  user: null,
  navigate(route) {
    if (location.hash === route) render();
    else location.hash = route;
  },
  signedIn(user) {
    ctx.user = user;
    ctx.navigate("#/tasks");
  },
  showError(error) {
    const text = error instanceof ApiError ? `${error.code}: ${error.message}` : error instanceof Error ? error.message : String(error);
    alertBox.textContent = text;
    alertBox.hidden = false;
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
    await client.auth.signOut().catch((e: unknown) => ctx.showError(e));
    ctx.navigate("#/signin");
  };
  replace(
    nav,
    h("span", { class: "brand" }, "Taskboard"),
    h("a", { href: "#/tasks", id: "nav-tasks" }, "Tasks"),
    h("a", { href: "#/upload", id: "nav-upload" }, "Upload"),
    h("a", { href: "#/generate", id: "nav-generate" }, "Generate"),
    h("a", { href: "#/admin", id: "nav-admin" }, "Admin"),
    h("span", { class: "spacer" }),
    h("span", { id: "whoami", class: "muted" }, user.email ?? user.id),
    h("button", { id: "sign-out", type: "button", onclick: () => void signOut() }, "Sign out"),
  );
}

function render(): void {
  cleanup?.();
  cleanup = undefined;
  alertBox.hidden = true;
  let route = parseRoute(location.hash);
  if (!ctx.user && route.name !== "signin") route = { name: "signin", params: {} };
  if (ctx.user && route.name === "signin") route = { name: "tasks", params: {} };
  renderNav();
  replace(main);
  main.dataset.view = route.name;
  cleanup = VIEWS[route.name](ctx, main, route.params) ?? undefined;
}

// The stored JWT vanished (sign-out, or a 401 that get-session could not cure): back to sign-in.
client.auth.onTokenChange((token) => {
  if (token || !ctx.user) return;
  ctx.user = null;
  render();
  ctx.showError(new ApiError(401, "unauthorized", "your session has ended: sign in again"));
});

async function boot(): Promise<void> {
  replace(root, h("header", {}, nav), alertBox, main);
  let problem: unknown;
  try {
    // With a stored JWT, or a still-valid session cookie (the client asks get-session on 401).
    const me: CurrentUser = await client.me();
    ctx.user = me;
  } catch (error) {
    if (!(error instanceof ApiError && error.unauthorized)) problem = error;
  }
  window.addEventListener("hashchange", render);
  render();
  if (problem) ctx.showError(problem);
  document.body.dataset.ready = "true";
}

void boot();
