import { AppError } from "@app/http-kit";
import type { CookieOptions, Request, Response } from "express";
import type { ActiveSession, Sessions } from "../services/sessions.js";

/** How the session cookie is written. */
export interface CookieSettings {
  name: string;
  secure: boolean;
}

function options(settings: CookieSettings): CookieOptions {
  return { httpOnly: true, sameSite: "lax", secure: settings.secure, path: "/" };
}

/**
 * Writes `<prefix>.session_token`: HttpOnly, SameSite=Lax, Secure on https, expiring with the
 * session; without `expiresAt` a browser-session cookie (sign-in with `rememberMe: false`).
 */
export function setSessionCookie(res: Response, settings: CookieSettings, token: string, expiresAt: Date | undefined): void {
  res.cookie(settings.name, token, expiresAt ? { ...options(settings), expires: expiresAt } : options(settings));
}

/** Clears the session cookie. */
export function clearSessionCookie(res: Response, settings: CookieSettings): void {
  res.clearCookie(settings.name, options(settings));
}

/** The session cookie's value, if the request carries one. */
export function readSessionCookie(req: Request, settings: CookieSettings): string | undefined {
  const value = (req.cookies as Record<string, unknown> | undefined)?.[settings.name];
  return typeof value === "string" ? value : undefined;
}

/** Where {@link resolveSession} keeps the session it looked up, for the rest of the request. */
const RESOLVED = "identity.resolvedSession";

/**
 * Looks the request's session up ahead of its route's handler (the `session` guard,
 * middleware/guards.ts), so that a limit can count per user (middleware/rate-limits.ts, password
 * checks); {@link requireSession} then uses the same lookup.
 */
export async function resolveSession(
  sessions: Pick<Sessions, "validate">,
  settings: CookieSettings,
  req: Request,
  res: Response,
): Promise<void> {
  res.locals[RESOLVED] = { active: await sessions.validate(readSessionCookie(req, settings)) };
}

/** The user of the session {@link resolveSession} found for this request, if any. */
export function resolvedUserId(res: Response): string | undefined {
  return (res.locals[RESOLVED] as { active?: ActiveSession } | undefined)?.active?.user.id;
}

/**
 * The request's live session, or 401 `unauthorized` for routes that need one: a cookie that no
 * longer names a session is cleared, and a session whose sliding expiry moved gets its cookie
 * re-set (services/sessions.ts).
 */
export async function requireSession(
  sessions: Pick<Sessions, "validate">,
  settings: CookieSettings,
  req: Request,
  res: Response,
): Promise<ActiveSession> {
  const token = readSessionCookie(req, settings);
  const resolved = res.locals[RESOLVED] as { active: ActiveSession | undefined } | undefined;
  const active = resolved ? resolved.active : await sessions.validate(token);
  if (!active) {
    if (token !== undefined) clearSessionCookie(res, settings);
    throw new AppError("unauthorized", "no valid session: sign in first");
  }
  if (active.refreshed && token) setSessionCookie(res, settings, token, active.session.expiresAt);
  return active;
}
