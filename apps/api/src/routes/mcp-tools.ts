import { callMcpToolBody, idParams, mcpToolParams, mcpToolResultSchema, mcpToolSchema } from "@app/contracts";
import type { ApiRoutes } from "../lib/registry.js";
import type { McpToolsService } from "../mcp/tools.js";

/**
 * The tools of a connected MCP server (bearer-authenticated JSON). Upstream trouble answers with
 * a code: 409 `mcp_reconnect_required`, 502 `mcp_upstream_unavailable` / `mcp_upstream_invalid` /
 * `mcp_result_too_large`, 504 `mcp_upstream_timeout` (see ../mcp/errors.ts).
 */
export function mcpToolRoutes(api: ApiRoutes, tools: McpToolsService): void {
  api.json(
    "get",
    "/api/mcp-servers/:id/tools",
    { tag: "mcp", summary: "List the tools of one of the caller's connected MCP servers (name, description, input schema)" },
    {
      auth: true,
      params: idParams,
      response: mcpToolSchema.array(),
      handler: (ctx) => tools.list(ctx.userId, ctx.params.id),
    },
  );
  api.json(
    "post",
    "/api/mcp-servers/:id/tools/:name/call",
    { tag: "mcp", summary: "Call one tool of a connected MCP server with JSON arguments; answers the tool's result" },
    {
      auth: true,
      params: mcpToolParams,
      body: callMcpToolBody,
      response: mcpToolResultSchema,
      handler: (ctx) => tools.call(ctx.userId, ctx.params.id, ctx.params.name, ctx.body),
    },
  );
}
