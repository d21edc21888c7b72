/**
 * An authorization request waiting for a sign-in. Identity's authorization server sends a browser
 * without a session to `/sign-in?callbackURL=<its interaction step>` (router.ts SIGN_IN_PATH);
 * once signed in, whichever way (password and second factor, passkey, mailed link or code, a
 * provider, a sign-up), the browser goes back there, and identity goes on to the consent page or
 * straight to the application. The address is kept per tab, so a sign-in that leaves the page (a
 * provider, a mailed link opened here) still finds it.
 */

import { h, replace } from "./dom.js";
import { SIGN_IN_PATH } from "./router.js";

const KEY = "web.authorizationReturn";
/** Where identity's authorization steps are, under the service's base URL. */
const AUTHORIZATION_PATH = "/api/auth/oauth2/";
/** How long a kept return is worth following: an authorization request lasts 15 minutes (identity's LIFETIMES.interaction). */
export const AUTHORIZATION_RETURN_MS = 15 * 60 * 1000;

/**
 * The `callbackURL` of the authorization server's sign-in landing, when it is one of the
 * service's authorization steps (`<service base URL>/api/auth/oauth2/…`); undefined for anything
 * else, so the sign-in page never sends a browser to an address a link made up.
 */
export function authorizationReturnOf(callbackURL: string | null, serviceBaseUrl: string): string | undefined {
  if (!callbackURL) return undefined;
  try {
    const url = new URL(callbackURL);
    const base = new URL(serviceBaseUrl);
    const prefix = `${base.pathname.replace(/\/+$/, "")}${AUTHORIZATION_PATH}`;
    if (url.origin !== base.origin || !url.pathname.startsWith(prefix) || url.username || url.password) return undefined;
    return url.href;
  } catch {
    return undefined;
  }
}

function storage(): Storage | undefined {
  try {
    return globalThis.sessionStorage;
  } catch {
    return undefined;
  }
}

/** Keeps `url` (from {@link authorizationReturnOf}) for the next sign-in in this tab. */
export function holdAuthorizationReturn(url: string, now: number = Date.now()): void {
  try {
    storage()?.setItem(KEY, JSON.stringify({ url, at: now }));
  } catch {
    // Storage refused (private mode): the sign-in opens the task list, and the application asks again.
  }
}

function read(now: number): string | undefined {
  try {
    const held = JSON.parse(storage()?.getItem(KEY) ?? "null") as { url?: unknown; at?: unknown } | null;
    if (typeof held?.url !== "string" || typeof held.at !== "number") return undefined;
    return now - held.at <= AUTHORIZATION_RETURN_MS && held.at <= now ? held.url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * At the page's start: on the authorization server's sign-in landing (`/sign-in?callbackURL=`),
 * keeps the callback when it is one of the service's authorization steps.
 */
export function holdAuthorizationLanding(pathname: string, search: string, serviceBaseUrl: string, now: number = Date.now()): void {
  if (pathname.replace(/\/+$/, "") !== SIGN_IN_PATH) return;
  const back = authorizationReturnOf(new URLSearchParams(search).get("callbackURL"), serviceBaseUrl);
  if (back) holdAuthorizationReturn(back, now);
}

/** Leaves for the authorization step that waited for this sign-in, saying so in `view` meanwhile. */
export function continueAuthorization(view: HTMLElement, url: string): void {
  replace(view, h("p", { id: "authorization-return", role: "status" }, "Signed in. Taking you back to the app that asked…"));
  location.assign(url);
}

/** Whether an authorization request waits for this tab's sign-in. */
export function authorizationWaiting(now: number = Date.now()): boolean {
  return read(now) !== undefined;
}

/** The kept return, removed: where the browser goes right after signing in (undefined when none, or when it is too old). */
export function takeAuthorizationReturn(now: number = Date.now()): string | undefined {
  const url = read(now);
  try {
    storage()?.removeItem(KEY);
  } catch {
    // Nothing kept.
  }
  return url;
}
