import type { IncomingMessage } from "node:http";
import {
  MCP_RESOURCE_METADATA_PATH,
  MCP_RESOURCE_PATH,
  MCP_SCOPES,
  MCP_TOOLS,
  type McpRequestBody,
  type McpScope,
  type McpToolName,
  mcpRequestBody,
  protectedResourceMetadataSchema,
} from "@app/contracts";
import { ANSWERED, type AnyRoute, type AppError, defineRoute, type Guard, guard, isAppError } from "@app/http-kit";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Response } from "express";
import { jsonBody } from "../entry/body.js";
import { requireAuth } from "../entry/stream-auth.js";
import { releaseOnClose, type UserCaps } from "../lib/user-caps.js";
import { rateLimitHeaders, type UserRates } from "../lib/user-rates.js";
import { insufficientScope, type McpGrant, type McpResource } from "./grant.js";
import { type McpToolDeps, mcpServerFor } from "./tools.js";

/** What the MCP server's routes need. */
export interface McpServerRouteDeps {
  resource: McpResource;
  /** The MCP bearer guard (grant.ts). */
  bearer: Guard;
  caps: UserCaps;
  rates: UserRates;
  tools: McpToolDeps;
}

/** JSON-RPC's "server error" range: the code of every refusal this resource answers before the MCP server sees the message. */
const REFUSED = -32000;

type RpcId = string | number | null;

/** The ids of the requests in a body (notifications have none) and the tools its tool calls name. */
function inspect(body: McpRequestBody): { ids: RpcId[]; tools: string[] } {
  const ids: RpcId[] = [];
  const tools: string[] = [];
  for (const message of Array.isArray(body) ? body : [body]) {
    const { id, method, params } = message as { id?: unknown; method?: unknown; params?: { name?: unknown } };
    if (typeof method !== "string") continue;
    if (typeof id === "string" || typeof id === "number") ids.push(id);
    if (method === "tools/call") tools.push(typeof params?.name === "string" ? params.name : "");
  }
  return { ids, tools };
}

/** A refusal as an MCP client reads it: the HTTP status and headers of the error, and a JSON-RPC error for each request. */
function refuse(res: Response, error: AppError, ids: RpcId[]): typeof ANSWERED {
  const answer = (id: RpcId) => ({ jsonrpc: "2.0", id, error: { code: REFUSED, message: error.message, data: { code: error.code } } });
  res.status(error.status).set(error.headers ?? {});
  res.json(ids.length > 1 ? ids.map(answer) : answer(ids[0] ?? null));
  return ANSWERED;
}

/** The scope a body needs beyond the grant: any MCP scope at all, then the scope of each tool it calls. */
function missingScope(grant: McpGrant, tools: readonly string[]): McpScope | undefined {
  if (grant.scopes.size === 0) return "mcp:read";
  for (const name of tools) {
    // An unknown tool is the SDK's to refuse (a JSON-RPC error), whatever the scopes.
    if (!Object.hasOwn(MCP_TOOLS, name)) continue;
    const { scope } = MCP_TOOLS[name as McpToolName];
    if (!grant.scopes.has(scope)) return scope;
  }
  return undefined;
}

/**
 * The API as an MCP server (Streamable HTTP, stateless: every POST carries one message or batch
 * and gets its JSON answer, no `Mcp-Session-Id`, so any instance behind the gateway answers any
 * request and nothing is held between them), and its protected resource metadata (RFC 9728).
 *
 * POST /api/mcp runs, in order: the access token (grant.ts; 401 with the challenge), the user's
 * cap on requests under way (429), the JSON body, the scopes its messages need (403
 * `insufficient_scope`), the user's tool calls per minute (429), then the SDK's server with the
 * tools the scopes allow (tools.ts).
 */
export function mcpResourceRoutes(deps: McpServerRouteDeps): AnyRoute[] {
  const { resource, bearer, caps, rates } = deps;
  const requests = guard("mcpRequests", async (req, res) => {
    releaseOnClose(res, await caps.acquire("mcpRequests", requireAuth(req).userId));
  });
  const toolCalls = rates.limit("mcpToolCalls");
  const metadata = {
    resource: resource.resource,
    authorization_servers: [resource.issuer],
    scopes_supported: [...MCP_SCOPES],
    bearer_methods_supported: ["header" as const],
    resource_name: "Projects, tasks and chats (MCP)",
  };
  const stateless = (method: "get" | "delete") =>
    defineRoute({
      method,
      path: MCP_RESOURCE_PATH,
      tag: "mcp-server",
      summary: "405: the MCP server is stateless (no standalone event stream, no session to end); every message is a POST",
      reply: { raw: "application/json" },
      guards: [bearer],
      handler: ({ res }) => {
        res.status(405).set("Allow", "POST");
        res.json({ jsonrpc: "2.0", id: null, error: { code: REFUSED, message: "Method not allowed: POST each message" } });
      },
    });
  return [
    defineRoute({
      method: "get",
      path: MCP_RESOURCE_METADATA_PATH,
      tag: "mcp-server",
      summary: "Protected resource metadata of /api/mcp (RFC 9728): its authorization server and scopes",
      reply: "json",
      response: protectedResourceMetadataSchema,
      handler: ({ res }) => {
        // Public and the same for everyone: any origin may read it (browser-based MCP clients).
        res.set({ "Access-Control-Allow-Origin": "*", "Cache-Control": "public, max-age=3600" });
        return metadata;
      },
    }),
    defineRoute({
      method: "post",
      path: MCP_RESOURCE_PATH,
      tag: "mcp-server",
      summary:
        "The MCP server (Streamable HTTP, stateless JSON answers): tools over projects, tasks and chats. OAuth 2.1 access token of this resource (`aud` /api/mcp, `typ` at+jwt); `mcp:read` lists and reads, `mcp:write` creates tasks and messages.",
      body: mcpRequestBody,
      reply: { raw: "application/json" },
      guards: [bearer, requests, jsonBody],
      handler: async ({ req, res, body }) => {
        const { userId } = requireAuth(req);
        const grant = req.mcpGrant as McpGrant;
        const { ids, tools } = inspect(body);
        const missing = missingScope(grant, tools);
        if (missing) return refuse(res, insufficientScope(resource, missing, grant), ids);
        if (tools.length > 0) {
          try {
            const { remaining } = await rates.take("mcpToolCalls", userId, tools.length);
            res.set(rateLimitHeaders("mcpToolCalls", toolCalls, remaining));
          } catch (error) {
            if (isAppError(error)) return refuse(res, error, ids);
            throw error;
          }
        }
        const server = mcpServerFor(deps.tools, userId, grant.scopes);
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        res.once("close", () => void server.close().catch(() => undefined));
        await server.connect(transport);
        await transport.handleRequest(req as IncomingMessage, res, body);
        return ANSWERED;
      },
    }),
    stateless("get"),
    stateless("delete"),
  ];
}
