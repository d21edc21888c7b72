import { SESSION_COOKIE_SUFFIX } from "@app/contracts";
import { type AnyRoute, openApiRoute as documentRoute, type RouteTable } from "@app/http-kit";

const DESCRIPTION =
  "Business API. Every route except the MCP OAuth pair takes `Authorization: Bearer <JWT>` (verified locally, zero database queries). JSON routes answer `{ ok: true, data }`; lists answer an array with the next cursor in `x-next-cursor`; streaming and multipart routes answer raw. WebSocket: `/api/ws?token=<JWT>`.";

/** GET /api/openapi.json: the document of the API's route table. */
export function openApiRoute(table: RouteTable, serverUrl: string): AnyRoute {
  return documentRoute(table, "/api/openapi.json", {
    title: "API",
    version: "1.0.0",
    description: DESCRIPTION,
    serverUrl,
    securitySchemes: {
      bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
      sessionCookie: { type: "apiKey", in: "cookie", name: `<prefix>${SESSION_COOKIE_SUFFIX}` },
    },
  });
}
