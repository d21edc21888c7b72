/**
 * The sample MCP server of a development stack (`MCP_SAMPLE=true pnpm start`): the tools package
 * @app/mcp-sample (tools/mcp-sample/src/sample-server.ts, the official SDK's MCP server behind the SDK's
 * OAuth authorization server, approving everyone), run inside the launcher like the development
 * mailbox (dev-mail.ts), so stopping the stack stops it.
 */

/** A running sample MCP server. */
export interface McpSample {
  /** What a user pastes on the MCP page. */
  url: string;
  /** Revokes every token the sample issued, as a server that stops trusting its clients (tests). */
  revokeTokens(): void;
  close(): Promise<void>;
}

/**
 * True when the launcher runs the sample: only when asked for (`MCP_SAMPLE=true`) and never in
 * production, since its authorization server approves every request and the API must allow
 * the sample's loopback address to reach it.
 */
export function wantsMcpSample(env: Record<string, string | undefined>): boolean {
  return env.MCP_SAMPLE === "true" && env.NODE_ENV !== "production";
}

/**
 * The API's MCP environment in a launched stack. With the web app on its own origin, the MCP
 * authorization callback sends the browser back to its MCP page (`MCP_OAUTH_RETURN_URL`, unless
 * the operator set one). With the sample running at `sampleUrl`, `MCP_ALLOW_PRIVATE_ORIGINS` names
 * its origin alone: the sample listens on 127.0.0.1 over http, which the outbound policy of
 * packages/http-kit/src/outbound/url-policy.ts refuses otherwise, and every other private or loopback
 * address stays refused (the API refuses that variable in production).
 */
export function apiMcpEnv(
  env: Record<string, string | undefined>,
  webUrl: string | undefined,
  sampleUrl: string | undefined,
): Record<string, string> {
  return {
    ...(webUrl && !env.MCP_OAUTH_RETURN_URL ? { MCP_OAUTH_RETURN_URL: `${webUrl}/#/mcp` } : {}),
    ...(sampleUrl ? { MCP_ALLOW_PRIVATE_ORIGINS: new URL(sampleUrl).origin } : {}),
  };
}

/**
 * Starts the sample on a free 127.0.0.1 port. The sample's package is loaded only here, so a stack
 * without the sample never imports the SDK's server side.
 */
export async function startMcpSample(): Promise<McpSample> {
  const { startMcpServer } = await import("@app/mcp-sample");
  const server = await startMcpServer({ port: 0 });
  return { url: server.url, revokeTokens: () => server.provider.revokeAll(), close: () => server.close() };
}
