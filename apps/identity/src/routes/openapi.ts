import { AUTH_BASE_PATH } from "@app/contracts";
import { type AnyRoute, openApiRoute as documentRoute, type RouteTable } from "@app/http-kit";
import { SESSION_COOKIE_SCHEME } from "../middleware/guards.js";

const DESCRIPTION =
  "Identity: accounts, sessions and the JWTs the API verifies, on better-auth's wire under /api/auth (plain JSON without an envelope, so its client works; errors are the contract's envelope with `code` and `message` also at the top). The session is the HttpOnly cookie; GET or POST get-session answers a fresh JWT in `set-auth-jwt`.";

/** GET /api/auth/openapi.json: the document of identity's route table, beside the API's /api/openapi.json. */
export function openApiRoute(table: RouteTable, info: { serverUrl: string; cookieName: string }): AnyRoute {
  return documentRoute(table, `${AUTH_BASE_PATH}/openapi.json`, {
    title: "Identity",
    version: "1.0.0",
    description: DESCRIPTION,
    serverUrl: info.serverUrl,
    securitySchemes: { [SESSION_COOKIE_SCHEME]: { type: "apiKey", in: "cookie", name: info.cookieName } },
  });
}
