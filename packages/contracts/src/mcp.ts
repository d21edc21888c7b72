import { z } from "zod";
import { timestampSchema } from "./pagination.js";

const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).max(2_000, "URL is too long");

/**
 * An OAuth endpoint URL: http(s), no user name or password in it. The API applies its outbound
 * policy on top (https only in production; no loopback, link-local or private addresses).
 */
const endpointUrl = httpUrl.refine((value) => !/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(value), "must not contain credentials");

/** OAuth client settings of an MCP server (authorization-code + PKCE). */
export const mcpOAuthSettingsBody = z.strictObject({
  authorizationUrl: endpointUrl,
  tokenUrl: endpointUrl,
  clientId: z.string().min(1).max(500),
  /** Confidential clients only; stored encrypted and never returned. */
  clientSecret: z.string().min(1).max(2_000).optional(),
  scope: z.string().max(1_000).optional(),
  /** The authorization server's issuer identifier (RFC 9207): when set, the callback's `iss` must equal it. */
  issuer: httpUrl.optional(),
});
export type McpOAuthSettingsBody = z.infer<typeof mcpOAuthSettingsBody>;

/** An MCP server as the API returns it (never a secret or a token). */
export const mcpServerSchema = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  oauth: z
    .object({
      authorizationUrl: z.string(),
      tokenUrl: z.string(),
      clientId: z.string(),
      scope: z.string().nullable(),
      issuer: z.string().nullable(),
      hasClientSecret: z.boolean(),
    })
    .nullable(),
  /** True once the OAuth flow stored tokens for this server. */
  connected: z.boolean(),
  connectedAt: timestampSchema.nullable(),
  tokenExpiresAt: timestampSchema.nullable(),
  createdAt: timestampSchema,
  updatedAt: timestampSchema,
});
export type McpServerView = z.infer<typeof mcpServerSchema>;

const name = z.string({ error: "name is required" }).trim().min(1, "name is required").max(200, "name is too long");

/** Body of POST /api/mcp-servers. */
export const createMcpServerBody = z.strictObject({ name, url: httpUrl, oauth: mcpOAuthSettingsBody.optional() });
export type CreateMcpServerBody = z.infer<typeof createMcpServerBody>;

/** Body of PATCH /api/mcp-servers/:id (`oauth: null` removes the OAuth settings and tokens). */
export const updateMcpServerBody = z
  .strictObject({ name: name.optional(), url: httpUrl.optional(), oauth: mcpOAuthSettingsBody.nullable().optional() })
  .refine((b) => Object.keys(b).length > 0, { message: "at least one field is required" });
export type UpdateMcpServerBody = z.infer<typeof updateMcpServerBody>;

/** Query of GET /api/mcp-oauth/authorize (top-level navigation, session cookie). */
export const mcpAuthorizeQuery = z.strictObject({ serverId: z.string().min(1).max(100) });
export type McpAuthorizeQuery = z.infer<typeof mcpAuthorizeQuery>;

/** Query of GET /api/mcp-oauth/callback, as the authorization server redirects back. */
export const mcpCallbackQuery = z.looseObject({
  state: z.string().min(1).max(500),
  code: z.string().min(1).max(4_000).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(2_000).optional(),
  /** RFC 9207 issuer identifier, checked against the server's `issuer` when one is configured. */
  iss: z.string().max(2_000).optional(),
});
export type McpCallbackQuery = z.infer<typeof mcpCallbackQuery>;
