import { AUTH_BASE_PATH } from "@app/contracts";
import { type AnyRoute, buildOpenApi, defineRoute, type RouteTable } from "@app/http-kit";
import { SESSION_COOKIE_SCHEME } from "../middleware/guards.js";

const DESCRIPTION =
  "Identity: accounts, sessions and the JWTs the API verifies, on better-auth's wire under /api/auth (plain JSON without an envelope, so its client works; errors are the contract's envelope with `code` and `message` also at the top). The session is the HttpOnly cookie; GET or POST get-session answers a fresh JWT in `set-auth-jwt`.";

/**
 * GET /api/auth/openapi.json: the OpenAPI 3.1 document of identity's route table (public, built
 * once on first use), beside the API's /api/openapi.json.
 */
export function openApiRoute(table: RouteTable, info: { serverUrl: string; cookieName: string }): AnyRoute {
  let cached: string | undefined;
  return defineRoute({
    method: "get",
    path: `${AUTH_BASE_PATH}/openapi.json`,
    tag: "docs",
    summary: "This document",
    reply: { raw: "application/json" },
    handler: ({ res }) => {
      cached ??= JSON.stringify(
        buildOpenApi(table, {
          title: "Identity",
          version: "1.0.0",
          description: DESCRIPTION,
          serverUrl: info.serverUrl,
          securitySchemes: { [SESSION_COOKIE_SCHEME]: { type: "apiKey", in: "cookie", name: info.cookieName } },
        }),
      );
      res.setHeader("content-type", "application/json; charset=utf-8");
      res.setHeader("cache-control", "public, max-age=300");
      res.status(200).send(cached);
    },
  });
}
