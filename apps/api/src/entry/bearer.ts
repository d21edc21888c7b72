import { type Guard, guard, setContextUser } from "@app/http-kit";
import type { Request } from "express";
import { type Authenticate, type AuthUser, authorizationOf } from "./authenticate.js";

function admit(req: Request, auth: AuthUser): void {
  req.auth = auth;
  setContextUser(auth.userId);
}

/**
 * The bearer guard every business route starts with: the one `Authorization` header through the
 * shared primitive (zero database queries), then `req.auth` and the request context's user. A
 * repeated token is admitted synchronously, so a route whose handler answers from the claims
 * (GET /api/me) costs no promise; a token jose has still to verify continues asynchronously.
 * Never reads a cookie.
 */
export function bearer(authenticate: Authenticate): Guard {
  return guard(
    "bearer",
    (req) => {
      const auth = authenticate(authorizationOf(req));
      if (auth instanceof Promise) return auth.then((user) => admit(req, user));
      admit(req, auth);
    },
    { security: "bearerAuth" },
  );
}
