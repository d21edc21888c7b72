import { aroundGuard, type Guard } from "@app/http-kit";
import { type AuthenticateThen, authorizationOf } from "./authenticate.js";

/**
 * The bearer guard every business route starts with: the one `Authorization` header through the
 * shared primitive (zero database queries), which records the user on `req.auth` and the request
 * context and then runs the rest of the route. A repeated token is admitted synchronously, so a
 * route whose handler answers from the claims (GET /api/me) costs no promise; a token jose has
 * still to verify continues the route in the reaction to its verification: one promise for the
 * guard and the route together. Never reads a cookie.
 */
export function bearer(authenticate: { readonly andThen: AuthenticateThen }): Guard {
  return aroundGuard("bearer", (req, _res, rest) => authenticate.andThen(authorizationOf(req), req, rest) as ReturnType<typeof rest>, {
    security: "bearerAuth",
  });
}
