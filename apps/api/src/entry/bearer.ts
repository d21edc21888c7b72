import { type Guard, guard } from "@app/http-kit";
import { type Authenticate, authorizationOf } from "./authenticate.js";

/**
 * The bearer guard every business route starts with: the one `Authorization` header through the
 * shared primitive (zero database queries), which records the user on `req.auth` and the request
 * context. A repeated token is admitted synchronously, so a route whose handler answers from the
 * claims (GET /api/me) costs no promise; a token jose has still to verify costs the one promise
 * of its verification. Never reads a cookie.
 */
export function bearer(authenticate: Authenticate): Guard {
  return guard(
    "bearer",
    (req) => {
      const auth = authenticate(authorizationOf(req), req);
      // The pipeline only waits for it: the user is already on the request when it settles.
      if (auth instanceof Promise) return auth as Promise<unknown> as Promise<void>;
    },
    { security: "bearerAuth" },
  );
}
