import { AUTH_TOKEN_STORAGE_KEY, type SessionResponse } from "@app/contracts";
import { ApiError, networkError } from "./errors.js";
import type { Http } from "./http.js";

/**
 * What one session check learned. Only a definite answer signs out: get-session's 401 (no
 * session) or a session of another user. Identity unreachable, a 5xx or a garbled answer is
 * `unknown`, and nothing changes.
 */
export type SessionCheck =
  | { status: "signed_in"; session: SessionResponse; token: string }
  | { status: "signed_out" }
  | { status: "unknown"; error: ApiError };

/** The part of `EventTarget` the watch listens on (the browser's `window` fits). */
export interface SessionEventTarget {
  addEventListener(type: string, listener: (event: Event) => void): void;
  removeEventListener(type: string, listener: (event: Event) => void): void;
}

/** Options of {@link watchSession}. */
export interface WatchSessionOptions {
  /** How often to check (default 60 000 ms, at least 1 000 ms). */
  intervalMs?: number;
  /**
   * The session is over: a check found none, or a call was refused and get-session found none.
   * By then the JWT is dropped and every stream and socket of the client is closed. Called once
   * per ended session, never after `signOut()` or `deleteUser()` (their caller knows).
   */
  onSignedOut(): void;
  /** A check got no definite answer (identity unreachable, a 5xx): the user stays signed in. */
  onCheckFailed?(error: ApiError): void;
  /** Check at once (default true): a page that starts with a stored JWT asks whether it still holds. */
  checkNow?: boolean;
  /**
   * Where `focus`, `visibilitychange` and `storage` (another tab removed `authToken`) come from;
   * each one checks. Default: the browser's window; outside a browser, none.
   */
  events?: SessionEventTarget;
}

/** The default interval of {@link watchSession}: the web app's `SESSION_RECHECK_SECONDS` default. */
export const DEFAULT_SESSION_RECHECK_MS = 60_000;
const MIN_RECHECK_MS = 1_000;

/**
 * One check of the cookie session: POST get-session, the contract's step 2, which also stores a
 * fresh JWT (so a name or address changed elsewhere reaches this client's token). No session
 * there ends this client's session ({@link Http.endSession}); so does a session of a user other
 * than the one this client signed in, since its pages and its JWT belong to that one.
 */
export async function checkSession(http: Http): Promise<SessionCheck> {
  const before = http.user?.id;
  const switches = http.switches;
  let result: Awaited<ReturnType<Http["refresh"]>>;
  try {
    result = await http.refresh();
  } catch (error) {
    return { status: "unknown", error: networkError(error) };
  }
  const { session, token } = result;
  if (!session) return { status: "signed_out" };
  if (before !== undefined && session.user.id !== before && http.switches === switches) {
    http.endSession();
    return { status: "signed_out" };
  }
  if (!token) {
    const error = new ApiError(200, "missing_token", "get-session answered without a readable set-auth-jwt header");
    return { status: "unknown", error };
  }
  return { status: "signed_in", session, token };
}

function browserWindow(): SessionEventTarget | undefined {
  const candidate = globalThis as Partial<SessionEventTarget>;
  return typeof candidate.addEventListener === "function" && typeof candidate.removeEventListener === "function"
    ? (candidate as SessionEventTarget)
    : undefined;
}

function pageHidden(): boolean {
  return (globalThis as { document?: { visibilityState?: string } }).document?.visibilityState === "hidden";
}

/**
 * Keeps this client's sign-in true to the cookie session: checks ({@link checkSession}) at once,
 * every `intervalMs`, and whenever the window regains focus or becomes visible or another tab
 * removes `authToken`. A session ended on another device, by a password change or reset or by a
 * deleted account therefore ends here within one interval. Checks run only while the client holds
 * a JWT or knows its user, and never two at once. Returns the function that stops the watch.
 */
export function watchSession(http: Http, options: WatchSessionOptions): () => void {
  const intervalMs = Math.max(
    MIN_RECHECK_MS,
    Number.isFinite(options.intervalMs) ? (options.intervalMs as number) : DEFAULT_SESSION_RECHECK_MS,
  );
  const events = options.events ?? browserWindow();
  let stopped = false;
  let running = false;
  const unsubscribe = http.onSessionEnded(() => {
    if (!stopped) options.onSignedOut();
  });
  const check = (): void => {
    if (stopped || running) return;
    if (http.tokens.get() === null && http.user === undefined) return;
    running = true;
    void checkSession(http)
      .then((result) => {
        if (result.status === "unknown" && !stopped) options.onCheckFailed?.(result.error);
      })
      .finally(() => {
        running = false;
      });
  };
  const onFocus = () => check();
  const onVisibility = () => {
    if (!pageHidden()) check();
  };
  // Only a removal is news: every check stores a fresh JWT, so a check on each new value would
  // have two tabs answer each other's checks for ever.
  const onStorage = (event: Event) => {
    const { key, newValue } = event as { key?: string | null; newValue?: string | null };
    if (key === null || (key === AUTH_TOKEN_STORAGE_KEY && newValue === null)) check();
  };
  events?.addEventListener("focus", onFocus);
  events?.addEventListener("visibilitychange", onVisibility);
  events?.addEventListener("storage", onStorage);
  const timer = setInterval(check, intervalMs);
  (timer as { unref?: () => void }).unref?.();
  if (options.checkNow ?? true) check();
  return () => {
    if (stopped) return;
    stopped = true;
    clearInterval(timer);
    unsubscribe();
    events?.removeEventListener("focus", onFocus);
    events?.removeEventListener("visibilitychange", onVisibility);
    events?.removeEventListener("storage", onStorage);
  };
}
