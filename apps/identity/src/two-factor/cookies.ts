import { SESSION_COOKIE_SUFFIX } from "@app/contracts";
import type { CookieOptions, Request, Response } from "express";
import type { CookieSettings } from "../middleware/session-cookie.js";
import { parseCookies } from "../sign-in/cookies.js";

/** How long a pending second-factor sign-in lasts (better-auth's `twoFactorCookieMaxAge`: 10 minutes). */
export const PENDING_TTL_MS = 10 * 60 * 1000;
/** How long a device stays trusted after a second factor (better-auth's `trustDeviceMaxAge`: 30 days). */
export const TRUST_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * The two cookies of second factors, named as better-auth's `twoFactor` plugin names them under
 * our prefix (COOKIE_PREFIX, the session cookie's): `<prefix>.two_factor` holds a pending sign-in,
 * `<prefix>.trust_device` a trusted device. HttpOnly, SameSite=Lax, Secure on https, path /.
 */
export class TwoFactorCookies {
  readonly pending: string;
  readonly trust: string;
  readonly #options: CookieOptions;

  constructor(cookie: CookieSettings) {
    const prefix = cookie.name.endsWith(SESSION_COOKIE_SUFFIX) ? cookie.name.slice(0, -SESSION_COOKIE_SUFFIX.length) : cookie.name;
    this.pending = `${prefix}.two_factor`;
    this.trust = `${prefix}.trust_device`;
    this.#options = { httpOnly: true, sameSite: "lax", secure: cookie.secure, path: "/" };
  }

  /** The value of cookie `name` on the request, if any (parses the Cookie header when no guard did). */
  read(req: Request, res: Response, name: string): string | undefined {
    parseCookies(req, res);
    const value = (req.cookies as Record<string, unknown> | undefined)?.[name];
    return typeof value === "string" ? value : undefined;
  }

  set(res: Response, name: string, value: string, maxAgeMs: number): void {
    res.cookie(name, value, { ...this.#options, maxAge: maxAgeMs });
  }

  clear(res: Response, name: string): void {
    res.clearCookie(name, this.#options);
  }
}
