import { AppError, type Guard, guard } from "@app/http-kit";
import type { Response } from "express";
import { SESSION_COOKIE_SCHEME } from "../middleware/guards.js";
import { limitAsUser } from "../middleware/rate-limits.js";
import { type CookieSettings, clearSessionCookie, readSessionCookie, setSessionCookie } from "../middleware/session-cookie.js";
import type { ActiveSession, Sessions } from "../services/sessions.js";
import type { PendingSignIn, PendingSignIns } from "./pending.js";

/** Who a second-factor request is from: a signed-in user, or a sign-in waiting for its second factor. */
export type Caller = { kind: "session"; active: ActiveSession } | { kind: "pending"; pending: PendingSignIn };

const CALLER = "identity.twoFactorCaller";

/** The caller {@link twoFactorCaller} resolved for this request. */
export function callerOf(res: Response): Caller {
  const caller = res.locals[CALLER] as Caller | undefined;
  if (!caller) throw new Error("route reads the two-factor caller without its guard");
  return caller;
}

/** The user of a caller. */
export const callerUser = (caller: Caller) => (caller.kind === "session" ? caller.active.user : caller.pending.user);

/**
 * Resolves the caller of a second-factor route as better-auth does: the session when there is
 * one, else the pending sign-in of the `<prefix>.two_factor` cookie, else 401
 * `invalid_two_factor_cookie`. Names the user for the per-user limits after it.
 */
export function twoFactorCaller(sessions: Pick<Sessions, "validate">, cookie: CookieSettings, pending: PendingSignIns): Guard {
  return guard(
    "twoFactorCaller",
    async (req, res) => {
      const token = readSessionCookie(req, cookie);
      const active = await sessions.validate(token);
      let caller: Caller;
      if (active) {
        if (active.refreshed && token) setSessionCookie(res, cookie, token, active.session.expiresAt);
        caller = { kind: "session", active };
      } else {
        if (token !== undefined) clearSessionCookie(res, cookie);
        const found = await pending.read(req, res);
        if (!found) throw new AppError("invalid_two_factor_cookie", "no pending two-factor sign-in: sign in again");
        caller = { kind: "pending", pending: found };
      }
      res.locals[CALLER] = caller;
      limitAsUser(res, callerUser(caller).id);
    },
    { security: SESSION_COOKIE_SCHEME },
  );
}
