import { z } from "zod";
import { timestampSchema } from "./pagination.js";

const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).max(2_000, "URL is too long");

/**
 * An OAuth endpoint URL: http(s), no user name or password in it. The API applies its outbound
 * policy on top (https only in production; no loopback, link-local or private addresses).
 */
const endpointUrl = httpUrl.refine((value) => !/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(value), "must not contain credentials");

/**
 * Optional OAuth overrides of an MCP server. Without them the API discovers everything from the
 * server's URL (MCP authorization: RFC 9728, RFC 8414, RFC 7591). `authorizationUrl` and
 * `tokenUrl` together replace the discovered authorization server; `clientId` (and
 * `clientSecret`) replace dynamic client registration.
 */
export const mcpOAuthSettingsBody = z
  .strictObject({
    authorizationUrl: endpointUrl.optional(),
    tokenUrl: endpointUrl.optional(),
    clientId: z.string().min(1).max(500).optional(),
    /** Confidential clients only; stored encrypted and never returned. */
    clientSecret: z.string().min(1).max(2_000).optional(),
    scope: z.string().max(1_000).optional(),
    /** The authorization server's issuer identifier (RFC 9207): when set, the callback's `iss` must equal it. */
    issuer: httpUrl.optional(),
  })
  .refine((o) => (o.authorizationUrl === undefined) === (o.tokenUrl === undefined), {
    message: "authorizationUrl and tokenUrl go together",
    path: ["tokenUrl"],
  })
  .refine((o) => o.clientSecret === undefined || o.clientId !== undefined, {
    message: "clientSecret needs clientId",
    path: ["clientSecret"],
  });
export type McpOAuthSettingsBody = z.infer<typeof mcpOAuthSettingsBody>;

/** Where an MCP server stands: tokens usable, tokens refused or unrefreshable, or never authorized. */
export const mcpServerStatus = z.enum(["connected", "needs_reconnect", "not_connected"]);
export type McpServerStatus = z.infer<typeof mcpServerStatus>;

/** An MCP server as the API returns it (never a secret or a token). */
export const mcpServerSchema = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  /** The overrides as saved (null when everything is discovered). */
  oauth: z
    .object({
      authorizationUrl: z.string().nullable(),
      tokenUrl: z.string().nullable(),
      clientId: z.string().nullable(),
      scope: z.string().nullable(),
      issuer: z.string().nullable(),
      hasClientSecret: z.boolean(),
    })
    .nullable(),
  /** The authorization server found by the last connect (its issuer), or null. */
  authorizationServer: z.string().nullable(),
  status: mcpServerStatus,
  /** True while `status` is `connected`. */
  connected: z.boolean(),
  connectedAt: timestampSchema.nullable(),
  /** When the access token expires (it is refreshed shortly before); null when unknown or not connected. */
  expiresAt: timestampSchema.nullable(),
  tokenExpiresAt: timestampSchema.nullable(),
  createdAt: timestampSchema,
  updatedAt: timestampSchema,
});
export type McpServerView = z.infer<typeof mcpServerSchema>;

/** One tool of an MCP server (GET /api/mcp-servers/:id/tools). */
export const mcpToolSchema = z.object({
  name: z.string(),
  description: z.string().nullable(),
  /** JSON Schema of the tool's arguments, as the server declares it. */
  inputSchema: z.record(z.string(), z.unknown()),
});
export type McpTool = z.infer<typeof mcpToolSchema>;

/** Params of POST /api/mcp-servers/:id/tools/:name/call. */
export const mcpToolParams = z.strictObject({
  id: z.string().min(1).max(100),
  name: z.string().min(1).max(200),
});

/** Body of POST /api/mcp-servers/:id/tools/:name/call. */
export const callMcpToolBody = z.strictObject({ arguments: z.record(z.string(), z.unknown()).default({}) });
export type CallMcpToolBody = z.infer<typeof callMcpToolBody>;

/** A tool's result as the MCP server answered it (`content`, `structuredContent`, `isError`). */
export const mcpToolResultSchema = z.looseObject({
  content: z.array(z.looseObject({ type: z.string() })).default([]),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().default(false),
});
export type McpToolResult = z.infer<typeof mcpToolResultSchema>;

const name = z.string({ error: "name is required" }).trim().min(1, "name is required").max(200, "name is too long");

/** Body of POST /api/mcp-servers: a name and the server's URL are enough. */
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
