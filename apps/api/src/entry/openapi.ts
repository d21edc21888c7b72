import { SESSION_COOKIE_SUFFIX } from "@app/contracts";
import { type AnyRoute, buildOpenApi, defineRoute, type RouteTable } from "@app/http-kit";

const DESCRIPTION =
  "Business API. Every route except the MCP OAuth pair takes `Authorization: Bearer <JWT>` (verified locally, zero database queries). JSON routes answer `{ ok: true, data }`; lists answer an array with the next cursor in `x-next-cursor`; streaming and multipart routes answer raw. WebSocket: `/api/ws?token=<JWT>`.";

/** GET /api/openapi.json: the document of the route table (public, built once on first use). */
export function openApiRoute(table: RouteTable, serverUrl: string): AnyRoute {
  let cached: string | undefined;
  return defineRoute({
    method: "get",
    path: "/api/openapi.json",
    tag: "docs",
    summary: "This document",
    reply: { raw: "application/json" },
    handler: ({ res }) => {
      cached ??= JSON.stringify(
        buildOpenApi(table, {
          title: "API",
          version: "1.0.0",
          description: DESCRIPTION,
          serverUrl,
          securitySchemes: {
            bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
            sessionCookie: { type: "apiKey", in: "cookie", name: `<prefix>${SESSION_COOKIE_SUFFIX}` },
          },
        }),
      );
      res.setHeader("content-type", "application/json; charset=utf-8");
      res.setHeader("cache-control", "public, max-age=300");
      res.status(200).send(cached);
    },
  });
}
