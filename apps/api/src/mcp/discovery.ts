import { type FetchLike, type OutboundUrlPolicy, OutboundUrlRefused } from "@app/http-kit/outbound";
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
  registerClient,
} from "@modelcontextprotocol/sdk/client/auth.js";
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationFull,
  OAuthProtectedResourceMetadata,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { checkResourceAllowed, resourceUrlFromServerUrl } from "@modelcontextprotocol/sdk/shared/auth-utils.js";
import { LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { mcpError } from "./errors.js";

/** What connecting found out about an MCP server's authorization (stored on the server row). */
export interface Discovered {
  authServerUrl: string;
  metadata: AuthorizationServerMetadata;
  /** RFC 8707 resource indicator: the protected resource metadata's `resource`, else the server URL. */
  resource: string;
  /** The scope the server asked for in its 401 or lists in its metadata, if any. */
  scope: string | undefined;
}

const sameUrl = (a: string, b: string) => a.replace(/\/+$/, "") === b.replace(/\/+$/, "");

/** Turns any failure of an upstream step into a coded 502, so a bad upstream is never a 500. */
export function upstreamFailure(step: string, cause: unknown) {
  if (cause instanceof OutboundUrlRefused)
    return mcpError("mcp_upstream_invalid", `${step}: address refused by the outbound URL policy`, cause);
  const message = cause instanceof Error ? cause.message : String(cause);
  return mcpError("mcp_upstream_unavailable", `${step} failed: ${message.slice(0, 200)}`, cause);
}

/**
 * Checks what an authorization server says about itself (RFC 8414 §3.3: `issuer` equals the URL
 * the metadata was fetched for) and that every endpoint it names passes the outbound URL policy:
 * the browser is sent to `authorization_endpoint`, the API posts to the others.
 */
export function checkMetadata(authServerUrl: string, metadata: AuthorizationServerMetadata, policy: OutboundUrlPolicy): void {
  if (!sameUrl(metadata.issuer, authServerUrl)) {
    throw mcpError("mcp_upstream_invalid", `authorization server metadata names another issuer (${metadata.issuer.slice(0, 200)})`);
  }
  for (const field of ["authorization_endpoint", "token_endpoint", "registration_endpoint", "revocation_endpoint"] as const) {
    const value = (metadata as Record<string, unknown>)[field];
    if (value === undefined) continue;
    if (typeof value !== "string") throw mcpError("mcp_upstream_invalid", `authorization server ${field} is not a URL`);
    const problem = policy.problem(value);
    if (problem) throw mcpError("mcp_upstream_invalid", `authorization server ${field} ${problem}`);
  }
}

/** An MCP `initialize` without a token: answers 2xx (open server) or 401 (with a challenge, maybe). */
async function probeServer(serverUrl: string, fetchFn: FetchLike): Promise<Response> {
  try {
    const probe = await fetchFn(serverUrl, {
      method: "POST",
      headers: { accept: "application/json, text/event-stream", "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: "api", version: "1" } },
      }),
    });
    await probe.body?.cancel().catch(() => undefined);
    return probe;
  } catch (cause) {
    throw upstreamFailure("reaching the MCP server", cause);
  }
}

/**
 * MCP authorization discovery with the SDK's helpers: probe the server (a 401's
 * `WWW-Authenticate` may carry `resource_metadata` and `scope`), read the RFC 9728 protected
 * resource metadata (the SDK falls back to the well-known URLs), then the RFC 8414 metadata of
 * its first authorization server (the SDK falls back to OpenID discovery). A server without
 * protected resource metadata is its own authorization server (the SDK's legacy rule). A server
 * that answers the probe without asking for a token is "open".
 */
export async function discover(serverUrl: string, fetchFn: FetchLike, policy: OutboundUrlPolicy): Promise<Discovered | "open"> {
  const probe = await probeServer(serverUrl, fetchFn);
  // A server that initializes without a token needs no authorization at all.
  if (probe.ok) return "open";
  const challenge = probe.status === 401 ? extractWWWAuthenticateParams(probe) : {};
  let prm: OAuthProtectedResourceMetadata | undefined;
  try {
    prm = await discoverOAuthProtectedResourceMetadata(
      serverUrl,
      challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {},
      fetchFn,
    );
  } catch (cause) {
    if (cause instanceof OutboundUrlRefused || challenge.resourceMetadataUrl) throw upstreamFailure("protected resource metadata", cause);
  }
  if (prm && !checkResourceAllowed({ requestedResource: serverUrl, configuredResource: prm.resource })) {
    throw mcpError("mcp_upstream_invalid", "protected resource metadata is for another resource");
  }
  const authServerUrl = prm?.authorization_servers?.[0] ?? new URL("/", serverUrl).href;
  let metadata: AuthorizationServerMetadata | undefined;
  try {
    metadata = await discoverAuthorizationServerMetadata(authServerUrl, { fetchFn });
  } catch (cause) {
    throw upstreamFailure("authorization server metadata", cause);
  }
  if (!metadata)
    throw mcpError("mcp_upstream_unavailable", "the authorization server publishes no metadata (RFC 8414 or OpenID discovery)");
  checkMetadata(authServerUrl, metadata, policy);
  const scope = challenge.scope ?? prm?.scopes_supported?.join(" ");
  return { authServerUrl, metadata, resource: prm?.resource ?? resourceUrlFromServerUrl(serverUrl).href, scope: scope || undefined };
}

/** RFC 7591 dynamic registration of this API as a public client (PKCE, no secret) with one redirect URI. */
export async function register(
  discovered: Pick<Discovered, "authServerUrl" | "metadata" | "scope">,
  redirectUri: string,
  fetchFn: FetchLike,
): Promise<OAuthClientInformationFull> {
  if (!discovered.metadata.registration_endpoint) {
    throw mcpError("mcp_upstream_unavailable", "the authorization server offers no dynamic client registration: set oauth.clientId");
  }
  try {
    return await registerClient(discovered.authServerUrl, {
      metadata: discovered.metadata,
      clientMetadata: {
        client_name: "MCP client",
        redirect_uris: [redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
        ...(discovered.scope ? { scope: discovered.scope } : {}),
      },
      fetchFn,
    });
  } catch (cause) {
    throw upstreamFailure("dynamic client registration", cause);
  }
}
