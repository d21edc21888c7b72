import { meSchema } from "@app/contracts";
import { type AnyRoute, defineRoute, type Guard } from "@app/http-kit";
import { requireAuth } from "../entry/stream-auth.js";

const text = (value: unknown) => (typeof value === "string" ? value : null);

/**
 * GET /api/me: the caller as the bearer token states it, from the verified claims only (no
 * database query at all). `email` and `name` are an issuance-time snapshot (contract rule 2).
 */
export function meRoutes(bearer: Guard): AnyRoute[] {
  return [
    defineRoute({
      method: "get",
      path: "/api/me",
      tag: "me",
      summary: "The caller, from the token's claims (no database read)",
      response: meSchema,
      guards: [bearer],
      handler: ({ req }) => {
        const { userId, claims } = requireAuth(req);
        return { id: userId, email: text(claims.email), name: text(claims.name) };
      },
    }),
  ];
}
