import { mcpAuthorizeQuery, mcpCallbackQuery } from "@app/contracts";
import { type AnyRoute, AppError, defineRoute, type Guard, guard, isAppError } from "@app/http-kit";
import type { Logger } from "pino";
import { isMcpErrorCode } from "./errors.js";
import { type BegunFlow, type McpOAuthService, OAUTH_STATE_TTL_MS } from "./oauth.js";
import type { NonceCookie } from "./oauth-nonce-cookie.js";

/** The web app's return address with the outcome in its query. */
function backTo(returnUrl: string, outcome: Record<string, string>): string {
  const back = new URL(returnUrl);
  for (const [key, value] of Object.entries(outcome)) back.searchParams.set(key, value);
  return back.toString();
}

/**
 * The MCP OAuth flow. GET /api/mcp-oauth/authorize is top-level browser navigation and therefore
 * authenticated by the session cookie (through the identity service), never by a bearer; it
 * answers 302 to the discovered authorization server and sets the flow's nonce cookie, or, when
 * the MCP server or its authorization server is the problem, 302 back to the web app with
 * `?mcp=error&serverId=&code=` (a code of errors.ts). GET
 * /api/mcp-oauth/callback is authenticated by the single-use state it carries together with that
 * cookie (so only the browser that started the flow can finish it); it clears the cookie, stores
 * the tokens and answers 302 back to the web app.
 */
export function mcpOAuthRoutes(deps: {
  oauth: McpOAuthService;
  session: Guard;
  returnUrl: string;
  nonceCookie: NonceCookie;
  logger: Logger;
}): AnyRoute[] {
  // Whatever the outcome of a callback, its nonce is spent: the browser drops it, also when the
  // query is refused.
  const spendNonce = guard("spendNonce", (_req, res) => {
    res.append("set-cookie", deps.nonceCookie.clear());
    res.setHeader("cache-control", "no-store");
  });
  return [
    defineRoute({
      method: "get",
      path: "/api/mcp-oauth/authorize",
      tag: "mcp",
      summary: "Start the authorization-code + PKCE flow for one of the caller's MCP servers (session cookie; 302)",
      query: mcpAuthorizeQuery,
      status: 302,
      reply: { raw: "redirect" },
      guards: [deps.session],
      handler: async ({ req, res, query }) => {
        const userId = req.cookieUser?.userId;
        if (!userId) throw new AppError("unauthorized", "no valid session: sign in first");
        const { serverId } = query;
        res.setHeader("cache-control", "no-store");
        res.setHeader("referrer-policy", "no-referrer");
        let flow: BegunFlow;
        try {
          flow = await deps.oauth.begin(userId, serverId);
        } catch (error) {
          // The browser is mid-navigation: an upstream problem (discovery, registration, a lying
          // server) goes back to the web app as a code it can explain, never as a JSON page.
          if (!isAppError(error) || !isMcpErrorCode(error.code)) throw error;
          deps.logger.warn({ serverId, code: error.code, err: error.message }, "MCP authorization could not start");
          return res.redirect(302, backTo(deps.returnUrl, { mcp: "error", serverId, code: error.code }));
        }
        if ("open" in flow) return res.redirect(302, backTo(deps.returnUrl, { mcp: "connected", serverId }));
        res.append("set-cookie", deps.nonceCookie.set(flow.nonce, OAUTH_STATE_TTL_MS / 1000));
        res.redirect(302, flow.location);
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/mcp-oauth/callback",
      tag: "mcp",
      summary:
        "Finish the flow: exchange the code with the PKCE verifier and store the tokens encrypted (state + the flow's nonce cookie; 302)",
      query: mcpCallbackQuery,
      status: 302,
      reply: { raw: "redirect" },
      guards: [spendNonce],
      handler: async ({ req, res, query }) => {
        const { serverId } = await deps.oauth.complete(query, deps.nonceCookie.read(req));
        res.setHeader("referrer-policy", "no-referrer");
        res.redirect(302, backTo(deps.returnUrl, { mcp: "connected", serverId }));
      },
    }),
  ];
}
