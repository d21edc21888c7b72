import { mcpAuthorizeQuery, mcpCallbackQuery } from "@app/contracts";
import { AppError, parseOrThrow } from "@app/http-kit";
import type { RequestHandler } from "express";
import type { ApiRoutes } from "../lib/registry.js";
import type { McpOAuthService } from "../services/mcp-oauth.js";

/**
 * The MCP OAuth flow. GET /api/mcp-oauth/authorize is top-level browser navigation and therefore
 * authenticated by the session cookie (through the identity service), never by a bearer; it
 * answers 302 to the authorization server. GET /api/mcp-oauth/callback is authenticated by the
 * single-use state it carries; it stores the tokens and answers 302 back to the web app.
 */
export function mcpOAuthRoutes(api: ApiRoutes, deps: { oauth: McpOAuthService; cookieAuth: RequestHandler; returnUrl: string }): void {
  api.raw(
    {
      method: "get",
      path: "/api/mcp-oauth/authorize",
      tag: "mcp",
      summary: "Start the authorization-code + PKCE flow for one of the caller's MCP servers (session cookie; 302)",
      auth: "cookie",
      query: mcpAuthorizeQuery,
      status: 302,
      rawResponse: "redirect",
    },
    deps.cookieAuth,
    async (req, res) => {
      const userId = req.cookieUser?.userId;
      if (!userId) throw new AppError("unauthorized", "no valid session: sign in first");
      const { serverId } = parseOrThrow(mcpAuthorizeQuery, req.query, "query");
      const location = await deps.oauth.begin(userId, serverId);
      res.setHeader("cache-control", "no-store");
      res.setHeader("referrer-policy", "no-referrer");
      res.redirect(302, location);
    },
  );
  api.raw(
    {
      method: "get",
      path: "/api/mcp-oauth/callback",
      tag: "mcp",
      summary: "Finish the flow: exchange the code with the PKCE verifier and store the tokens encrypted (state-authenticated; 302)",
      auth: "none",
      query: mcpCallbackQuery,
      status: 302,
      rawResponse: "redirect",
    },
    async (req, res) => {
      const query = parseOrThrow(mcpCallbackQuery, req.query, "query");
      const { serverId } = await deps.oauth.complete(query);
      const back = new URL(deps.returnUrl);
      back.searchParams.set("mcp", "connected");
      back.searchParams.set("serverId", serverId);
      res.setHeader("cache-control", "no-store");
      res.setHeader("referrer-policy", "no-referrer");
      res.redirect(302, back.toString());
    },
  );
}
