import {
  callMcpToolBody,
  createMcpServerBody,
  idParams,
  mcpServerSchema,
  mcpToolParams,
  mcpToolResultSchema,
  mcpToolSchema,
  updateMcpServerBody,
} from "@app/contracts";
import { type AnyRoute, defineRoute, type Guard } from "@app/http-kit";
import { jsonBody } from "../entry/body.js";
import { requireAuth } from "../entry/stream-auth.js";
import { crudRoutes } from "../resources/crud.js";
import type { McpServersService } from "./servers.js";
import type { McpToolsService } from "./tools.js";

/**
 * The tools of a connected MCP server (bearer-authenticated JSON). Upstream trouble answers with
 * a code: 409 `mcp_reconnect_required`, 502 `mcp_upstream_unavailable` / `mcp_upstream_invalid` /
 * `mcp_result_too_large`, 504 `mcp_upstream_timeout` (see errors.ts).
 */
export function mcpToolRoutes(bearer: Guard, tools: McpToolsService): AnyRoute[] {
  return [
    defineRoute({
      method: "get",
      path: "/api/mcp-servers/:id/tools",
      tag: "mcp",
      summary: "List the tools of one of the caller's connected MCP servers (name, description, input schema)",
      params: idParams,
      response: mcpToolSchema.array(),
      guards: [bearer],
      handler: (ctx) => tools.list(requireAuth(ctx.req).userId, ctx.params.id),
    }),
    defineRoute({
      method: "post",
      path: "/api/mcp-servers/:id/tools/:name/call",
      tag: "mcp",
      summary: "Call one tool of a connected MCP server with JSON arguments; answers the tool's result",
      params: mcpToolParams,
      body: callMcpToolBody,
      response: mcpToolResultSchema,
      guards: [bearer, jsonBody],
      handler: (ctx) => tools.call(requireAuth(ctx.req).userId, ctx.params.id, ctx.params.name, ctx.body),
    }),
  ];
}

/** JSON CRUD for MCP servers: /api/mcp-servers[/:id] (secrets and tokens are never returned). */
export function mcpServerRoutes(bearer: Guard, servers: McpServersService): AnyRoute[] {
  return crudRoutes(
    bearer,
    {
      path: "/api/mcp-servers",
      tag: "mcp",
      noun: "MCP server",
      view: mcpServerSchema,
      create: createMcpServerBody,
      update: updateMcpServerBody,
    },
    servers,
  );
}
