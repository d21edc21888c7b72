/** MCP server tests: access tokens minted as the authorization server signs them, and the official SDK client. */
import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SignJWT } from "jose";
import type { TestApi } from "./helpers.js";

/** Overrides of one access token. */
export interface AccessTokenOptions {
  /** Default both MCP scopes. */
  scope?: string;
  audience?: string;
  issuer?: string;
  iat?: number;
  exp?: number;
  /** Default `at+jwt`. */
  typ?: string;
  /** null: no client_id claim. */
  clientId?: string | null;
}

/**
 * An RFC 9068 access token for `userId`, signed with the key the stub publishes, with the claims
 * the authorization server gives one for the MCP resource (iss = base URL, aud = resource, scope,
 * client_id, jti).
 */
export function accessToken(t: TestApi, userId: string, options: AccessTokenOptions = {}): Promise<string> {
  const key = t.stub.signingKey;
  const iat = options.iat ?? Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = { scope: options.scope ?? "mcp:read mcp:write" };
  if (options.clientId !== null) claims.client_id = options.clientId ?? "test-client";
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "EdDSA", kid: key.kid, typ: options.typ ?? "at+jwt" })
    .setSubject(userId)
    .setIssuer(options.issuer ?? t.config.mcpServer.issuer)
    .setAudience(options.audience ?? t.config.mcpServer.resource)
    .setIssuedAt(iat)
    .setExpirationTime(options.exp ?? iat + 3600)
    .setJti(randomUUID())
    .sign(key.privateKey);
}

/** The official SDK client connected to the API's MCP server with `token`. */
export async function connectAgent(t: TestApi, token: string): Promise<Client> {
  const client = new Client({ name: "test-agent", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${t.url}/api/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

/** Headers every Streamable HTTP POST carries. */
export const MCP_POST_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

/** One JSON-RPC message POSTed as a client would, with `token` (or none). */
export function post(t: TestApi, token: string | undefined, message: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${t.url}/api/mcp`, {
    method: "POST",
    headers: { ...MCP_POST_HEADERS, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...headers },
    body: JSON.stringify(message),
  });
}

/** A tool call message. */
export function toolCall(name: string, args: Record<string, unknown>, id: number | string = 1) {
  return { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } };
}

/** The structured content of a successful tool result (the test fails on an error result). */
export function structured<T = Record<string, unknown>>(result: unknown): T {
  const r = result as { isError?: boolean; content?: { text?: string }[]; structuredContent?: T };
  if (r.isError) throw new Error(`tool failed: ${r.content?.[0]?.text}`);
  return r.structuredContent as T;
}

/** The text of an error result (the test fails on a success). */
export function errorText(result: unknown): string {
  const r = result as { isError?: boolean; content?: { text?: string }[] };
  if (!r.isError) throw new Error(`expected an error result, got ${JSON.stringify(result)}`);
  return r.content?.[0]?.text ?? "";
}
