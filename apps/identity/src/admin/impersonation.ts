import { type AdminImpersonationResponse, IMPERSONATION_MAX_SECONDS, SESSION_COOKIE_SUFFIX } from "@app/contracts";
import type { PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";
import type { CookieOptions, Request, Response } from "express";
import { type CookieSettings, clearSessionCookie, readSessionCookie, setSessionCookie } from "../middleware/session-cookie.js";
import { recordEvent, requestFacts } from "../security-events/record.js";
import type { ActiveSession, Sessions } from "../services/sessions.js";
import { requestMeta } from "../views/public.js";
import { sessionsRevoked } from "./audit.js";
import type { AdminRoles } from "./roles.js";
import type { AdminUsers } from "./users.js";
import { managedSession, managedUser } from "./views.js";

/** Suffix of the cookie that keeps the admin's own session while impersonating (better-auth's `admin_session`). */
const ADMIN_SESSION_SUFFIX = ".admin_session";

/** `<prefix>.admin_session`, beside `<prefix>.session_token` (COOKIE_PREFIX). */
export function adminSessionCookieName(cookie: CookieSettings): string {
  const prefix = cookie.name.endsWith(SESSION_COOKIE_SUFFIX) ? cookie.name.slice(0, -SESSION_COOKIE_SUFFIX.length) : cookie.name;
  return `${prefix}${ADMIN_SESSION_SUFFIX}`;
}

/**
 * Impersonation, as better-auth's: an admin opens a session of another user (`impersonated_by`
 * = the admin, at most {@link IMPERSONATION_MAX_SECONDS}, never sliding) on the session cookie,
 * as a browser-session cookie, and keeps the admin's own session in `<prefix>.admin_session`;
 * stop-impersonating ends the impersonation and puts the admin's session back. JWTs of the
 * impersonation carry `act: { sub: <admin id> }`. Admins are never impersonated, nor banned users.
 * Start and stop are `impersonation_started` and `impersonation_stopped` security events of the
 * user (actor: the admin).
 */
export class Impersonation {
  readonly #db: PrismaClient;
  readonly #now: () => number;
  readonly #sessions: Sessions;
  readonly #roles: AdminRoles;
  readonly #users: AdminUsers;
  readonly #cookie: CookieSettings;
  readonly #adminCookie: string;

  constructor(deps: {
    prisma: PrismaClient;
    sessions: Sessions;
    roles: AdminRoles;
    users: AdminUsers;
    cookie: CookieSettings;
    now: () => number;
  }) {
    this.#db = deps.prisma;
    this.#now = deps.now;
    this.#sessions = deps.sessions;
    this.#roles = deps.roles;
    this.#users = deps.users;
    this.#cookie = deps.cookie;
    this.#adminCookie = adminSessionCookieName(deps.cookie);
  }

  #adminCookieOptions(): CookieOptions {
    return { httpOnly: true, sameSite: "lax", secure: this.#cookie.secure, path: "/" };
  }

  /**
   * POST impersonate-user: `admin` is the signed-in admin's session (the admin guard passed). The
   * session is made by services/sessions.ts outside any transaction of ours, so its event follows
   * it at once; when the event cannot be written the session is deleted again and never handed
   * out: no impersonation goes unrecorded.
   */
  async start(req: Request, res: Response, admin: ActiveSession, userId: string): Promise<AdminImpersonationResponse> {
    const target = await this.#users.find(userId);
    if (await this.#roles.isAdmin(target.id)) throw new AppError("forbidden", "admins cannot be impersonated");
    const user = await this.#sessions.admit(target);
    const adminToken = readSessionCookie(req, this.#cookie);
    if (adminToken === undefined) throw new AppError("unauthorized", "no valid session: sign in first");
    const { token, session } = await this.#sessions.create(user.id, requestMeta(req), {
      impersonatedBy: admin.user.id,
      ttlMs: IMPERSONATION_MAX_SECONDS * 1000,
    });
    const event = { type: "impersonation_started" as const, userId: user.id, actorId: admin.user.id, detail: { session: session.id } };
    await recordEvent(this.#db, event, requestFacts(req), new Date(this.#now())).catch(async (error: unknown) => {
      await this.#db.session.deleteMany({ where: { id: session.id } });
      throw error;
    });
    res.cookie(this.#adminCookie, adminToken, { ...this.#adminCookieOptions(), expires: admin.session.expiresAt });
    setSessionCookie(res, this.#cookie, token, undefined);
    return { session: managedSession(session), user: managedUser(user, "user") };
  }

  /**
   * POST stop-impersonating: ends the impersonation session and puts the admin's own session back
   * on the cookie. 400 when the session is not an impersonation; when the admin's session is gone
   * (expired, signed out, banned) the impersonation still ends, both cookies are cleared, and the
   * answer is 401: the admin signs in again.
   */
  async stop(req: Request, res: Response, current: ActiveSession): Promise<AdminImpersonationResponse> {
    const adminId = current.session.impersonatedBy;
    if (adminId === null) throw new AppError("bad_request", "you are not impersonating anyone");
    const cookies = req.cookies as Record<string, unknown> | undefined;
    const saved = cookies?.[this.#adminCookie];
    const admin = typeof saved === "string" ? await this.#sessions.validate(saved) : undefined;
    await this.#end(req, current, adminId);
    res.clearCookie(this.#adminCookie, this.#adminCookieOptions());
    if (!admin || admin.user.id !== adminId || typeof saved !== "string") {
      clearSessionCookie(res, this.#cookie);
      throw new AppError("unauthorized", "the admin's session has ended: sign in again");
    }
    setSessionCookie(res, this.#cookie, saved, admin.session.expiresAt);
    return { session: managedSession(admin.session), user: managedUser(admin.user, await this.#roles.roleOf(admin.user.id)) };
  }

  /** Deletes the impersonation session with its event and `session.revoked` webhook, in one transaction. */
  async #end(req: Request, current: ActiveSession, adminId: string): Promise<void> {
    const now = new Date(this.#now());
    const { id } = current.session;
    await this.#db.$transaction(async (tx) => {
      const { count } = await tx.session.deleteMany({ where: { id } });
      if (!count) return;
      const event = { type: "impersonation_stopped" as const, userId: current.user.id, actorId: adminId, detail: { session: id } };
      await recordEvent(tx, event, requestFacts(req), now);
      await sessionsRevoked(tx, current.user.id, [id], "impersonation_stopped", now);
    });
  }
}
