import { meSchema } from "@app/contracts";
import type { ApiRoutes } from "../lib/registry.js";

const text = (value: unknown) => (typeof value === "string" ? value : null);

/**
 * GET /api/me: the caller as the bearer token states it, from the verified claims only (no
 * database query at all). `email` and `name` are an issuance-time snapshot (contract rule 2).
 */
export function meRoutes(api: ApiRoutes): void {
  api.json(
    "get",
    "/api/me",
    { tag: "me", summary: "The caller, from the token's claims (no database read)" },
    {
      auth: true,
      response: meSchema,
      handler: ({ auth }) => ({ id: auth.userId, email: text(auth.claims.email), name: text(auth.claims.name) }),
    },
  );
}
