import { MCP_RESOURCE_METADATA_PATH, MCP_RESOURCE_PATH, SESSION_COOKIE_SUFFIX } from "@app/contracts";
import { type AnyRoute, openApiRoute as documentRoute, type RouteTable } from "@app/http-kit";

const DESCRIPTION =
  "Business API. Every route except the MCP OAuth pair and the MCP server takes `Authorization: Bearer <JWT>` (verified locally, zero database queries); the MCP server (`/api/mcp`) takes an OAuth 2.1 access token of its own resource, found from its protected resource metadata. JSON routes answer `{ ok: true, data }`; lists answer an array with the next cursor in `x-next-cursor`; streaming and multipart routes answer raw. WebSocket: `/api/ws?token=<JWT>`.";

/** GET /api/openapi.json: the document of the API's route table. */
export function openApiRoute(table: RouteTable, serverUrl: string): AnyRoute {
  return documentRoute(table, "/api/openapi.json", {
    title: "API",
    version: "1.0.0",
    description: DESCRIPTION,
    serverUrl,
    securitySchemes: {
      bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
      mcpAccessToken: {
        type: "http",
        scheme: "bearer",
        bearerFormat: "at+jwt",
        description: `An OAuth 2.1 access token (RFC 9068) with \`aud\` ${serverUrl}${MCP_RESOURCE_PATH} and the scopes mcp:read or mcp:write, from the authorization server its metadata names (${serverUrl}${MCP_RESOURCE_METADATA_PATH}).`,
      },
      sessionCookie: { type: "apiKey", in: "cookie", name: `<prefix>${SESSION_COOKIE_SUFFIX}` },
    },
  });
}
