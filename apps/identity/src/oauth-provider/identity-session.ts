import type { IncomingMessage } from "node:http";
import { type Guard, guard } from "@app/http-kit";
import { SESSION_COOKIE_SCHEME } from "../middleware/guards.js";
import { type CookieSettings, readSessionCookie, setSessionCookie } from "../middleware/session-cookie.js";
import type { ActiveSession, Sessions } from "../services/sessions.js";

/**
 * The identity session of each authorization request, looked up by {@link identitySessionGuard}
 * before oidc-provider sees the request: its login check (provider.ts) and identity's interaction
 * step read it from the Node request oidc-provider's context carries.
 */
const sessions = new WeakMap<IncomingMessage, ActiveSession>();

/** The live identity session of a request, if {@link identitySessionGuard} found one. */
export function identitySessionOf(req: IncomingMessage): ActiveSession | undefined {
  return sessions.get(req);
}

/**
 * The user an authorization may be granted for: the session's, unless an administrator is acting
 * as that user (an impersonation session authorizes no application).
 */
export function authorizingUserOf(req: IncomingMessage): string | undefined {
  const active = sessions.get(req);
  return active && active.session.impersonatedBy === null ? active.user.id : undefined;
}

/**
 * Looks the session cookie up (after the `cookies` guard), without refusing a request that has
 * none: the authorization steps send that browser to sign in. A banned user or one midway through
 * a second factor holds no session (services/sessions.ts). A session whose expiry slid gets its
 * cookie re-set.
 */
export function identitySessionGuard(store: Pick<Sessions, "validate">, cookie: CookieSettings): Guard {
  return guard(
    "session",
    async (req, res) => {
      const token = readSessionCookie(req, cookie);
      const active = await store.validate(token);
      if (!active) return;
      sessions.set(req, active);
      if (active.refreshed && token) setSessionCookie(res, cookie, token, active.session.expiresAt);
    },
    { security: SESSION_COOKIE_SCHEME },
  );
}
