import type { CookieOptions, Request, Response } from "express";

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
