/**
 * A sample MCP server for tests and local trials (`pnpm --filter @app/mcp-sample start`): the official SDK's `McpServer` over Streamable
 * HTTP (stateless, one server per request), protected by the SDK's own OAuth authorization server
 * (`mcpAuthRouter`: RFC 8414 metadata, RFC 9728 protected resource metadata, RFC 7591 dynamic
 * registration, PKCE) with an in-memory provider that approves every authorization at once.
 * Tokens are audience-bound (RFC 8707): each carries the resource it was authorized for (the MCP
 * endpoint when the client named none), and the MCP endpoint refuses a token for any other
 * resource through the SDK's own check (`expectedResource` of its bearer middleware).
 * Knobs let a test expire or revoke tokens and make the metadata lie.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import type { OAuthRegisteredClientsStore } from "@modelcontextprotocol/sdk/server/auth/clients.js";
import { InvalidGrantError, InvalidTargetError, InvalidTokenError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import type { AuthorizationParams, OAuthServerProvider } from "@modelcontextprotocol/sdk/server/auth/provider.js";
import { createOAuthMetadata, getOAuthProtectedResourceMetadataUrl, mcpAuthRouter } from "@modelcontextprotocol/sdk/server/auth/router.js";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { OAuthClientInformationFull, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import express, { type RequestHandler, type Response } from "express";
import { z } from "zod";

/**
 * The SDK's bearer middleware, imported by a computed name: its type declarations add an `auth`
 * field to Express's Request that clashes with the API's own (apps/api/src/entry/authenticate.ts),
 * and the API's tests load this package.
 */
const BEARER_MODULE = "@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js";
type RequireBearerAuth = (options: {
  verifier: OAuthServerProvider;
  resourceMetadataUrl?: string;
  expectedResource?: URL;
}) => RequestHandler;

interface Grant {
  clientId: string;
  scopes: string[];
  /** The audience of the tokens of this grant (RFC 8707 resource indicator). */
  resource: string;
}

/** The in-memory authorization server: every authorization is approved on the spot. */
export class AutoApproveProvider implements OAuthServerProvider {
  readonly clients = new Map<string, OAuthClientInformationFull>();
  readonly codes = new Map<string, Grant & { challenge: string }>();
  readonly accessTokens = new Map<string, Grant & { expiresAt: number }>();
  readonly refreshTokens = new Map<string, Grant>();
  /** Lifetime of the access tokens issued from now on. */
  accessTtlS = 3600;
  /** What the authorization requests asked for (`resource`, RFC 8707). */
  readonly authorizations: AuthorizationParams[] = [];
  readonly counts = { registrations: 0, refreshes: 0, exchanges: 0 };

  /** @param resource The audience of a token whose authorization named no resource: the MCP endpoint. */
  constructor(readonly resource: string) {}

  get clientsStore(): OAuthRegisteredClientsStore {
    return {
      getClient: (id) => this.clients.get(id),
      registerClient: (client) => {
        const full = { ...client, client_id: randomUUID(), client_id_issued_at: Math.floor(Date.now() / 1000) };
        this.clients.set(full.client_id, full);
        this.counts.registrations += 1;
        return full;
      },
    };
  }

  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    this.authorizations.push(params);
    const code = randomUUID();
    this.codes.set(code, {
      clientId: client.client_id,
      scopes: params.scopes ?? [],
      resource: params.resource?.href ?? this.resource,
      challenge: params.codeChallenge,
    });
    const back = new URL(params.redirectUri);
    back.searchParams.set("code", code);
    if (params.state) back.searchParams.set("state", params.state);
    res.redirect(302, back.href);
  }

  async challengeForAuthorizationCode(_client: OAuthClientInformationFull, code: string): Promise<string> {
    const grant = this.codes.get(code);
    if (!grant) throw new InvalidGrantError("unknown authorization code");
    return grant.challenge;
  }

  async exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    code: string,
    _verifier?: string,
    _redirectUri?: string,
    resource?: URL,
  ): Promise<OAuthTokens> {
    const grant = this.codes.get(code);
    if (!grant || grant.clientId !== client.client_id) throw new InvalidGrantError("unknown authorization code");
    // RFC 8707 §2.2: the token request may narrow the audience, never change it.
    if (resource && resource.href !== grant.resource) throw new InvalidTargetError("resource differs from the authorized one");
    this.codes.delete(code);
    this.counts.exchanges += 1;
    return this.#issue(grant);
  }

  async exchangeRefreshToken(
    client: OAuthClientInformationFull,
    refreshToken: string,
    _scopes?: string[],
    resource?: URL,
  ): Promise<OAuthTokens> {
    const grant = this.refreshTokens.get(refreshToken);
    if (!grant || grant.clientId !== client.client_id) throw new InvalidGrantError("refresh token revoked");
    if (resource && resource.href !== grant.resource) throw new InvalidTargetError("resource differs from the authorized one");
    this.refreshTokens.delete(refreshToken);
    this.counts.refreshes += 1;
    return this.#issue(grant);
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const grant = this.accessTokens.get(token);
    if (!grant) throw new InvalidTokenError("unknown or revoked access token");
    return {
      token,
      clientId: grant.clientId,
      scopes: grant.scopes,
      expiresAt: Math.floor(grant.expiresAt / 1000),
      resource: new URL(grant.resource),
    };
  }

  /** Every access token stops working at once (as if expired early): the client must refresh. */
  dropAccessTokens(): void {
    this.accessTokens.clear();
  }

  /** Access and refresh tokens are all revoked: the client must authorize again. */
  revokeAll(): void {
    this.accessTokens.clear();
    this.refreshTokens.clear();
  }

  #issue(grant: Grant): OAuthTokens {
    const access = `at-${randomUUID()}`;
    const refresh = `rt-${randomUUID()}`;
    this.accessTokens.set(access, { ...grant, expiresAt: Date.now() + this.accessTtlS * 1000 });
    this.refreshTokens.set(refresh, grant);
    return {
      access_token: access,
      token_type: "Bearer",
      expires_in: this.accessTtlS,
      refresh_token: refresh,
      scope: grant.scopes.join(" "),
    };
  }
}

/** Options of {@link startMcpServer}. */
export interface McpServerFixtureOptions {
  /** Name the protected resource metadata in the 401's `WWW-Authenticate` (default true); false leaves the well-known URLs. */
  advertiseResourceMetadata?: boolean;
  /** Fields that replace the authorization server's true metadata (a lying server). */
  metadataLies?: Record<string, unknown>;
  /** No authorization at all: the MCP endpoint takes requests without a token. */
  open?: boolean;
  /** Publish the authorization server metadata only as OpenID discovery (RFC 8414 URL answers 404). */
  openIdOnly?: boolean;
  port?: number;
}

/** A running fixture. */
export interface McpServerFixture {
  /** The MCP endpoint (what a user pastes). */
  url: string;
  /** The authorization server's issuer. */
  issuer: string;
  provider: AutoApproveProvider;
  /** Tool calls the server received. */
  calls: string[];
  close(): Promise<void>;
}

/** The tools: echo, add, slow (answers after `ms`), huge (answers `bytes` of text). */
function mcpServer(calls: string[]): McpServer {
  const server = new McpServer({ name: "fixture", version: "1.0.0" });
  server.registerTool("echo", { description: "Repeats the text", inputSchema: { text: z.string() } }, async ({ text }) => {
    calls.push("echo");
    return { content: [{ type: "text", text }] };
  });
  server.registerTool("add", { description: "Adds two numbers", inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => {
    calls.push("add");
    return { content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } };
  });
  server.registerTool("slow", { description: "Answers after ms milliseconds", inputSchema: { ms: z.number() } }, async ({ ms }) => {
    calls.push("slow");
    await new Promise((r) => setTimeout(r, ms));
    return { content: [{ type: "text", text: "done" }] };
  });
  server.registerTool("huge", { description: "Answers bytes of text", inputSchema: { bytes: z.number() } }, async ({ bytes }) => {
    calls.push("huge");
    return { content: [{ type: "text", text: "x".repeat(bytes) }] };
  });
  return server;
}

/** Starts the MCP server and its authorization server on one 127.0.0.1 port (`/mcp`, `/authorize`, ...). */
export async function startMcpServer(options: McpServerFixtureOptions = {}): Promise<McpServerFixture> {
  const http: Server = createServer();
  await new Promise<void>((r) => http.listen(options.port ?? 0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const mcpUrl = new URL(`${origin}/mcp`);
  const issuerUrl = new URL(`${origin}/`);
  const provider = new AutoApproveProvider(mcpUrl.href);
  const calls: string[] = [];
  const noLimit = { rateLimit: false as const };

  const app = express();
  const metadata = () => ({ ...createOAuthMetadata({ provider, issuerUrl, scopesSupported: ["tools"] }), ...options.metadataLies });
  if (options.metadataLies) app.get("/.well-known/oauth-authorization-server", (_req, res) => void res.json(metadata()));
  if (options.openIdOnly) {
    app.get("/.well-known/oauth-authorization-server", (_req, res) => void res.status(404).end());
    app.get("/.well-known/openid-configuration", (_req, res) => {
      res.json({
        ...metadata(),
        jwks_uri: `${origin}/jwks`,
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["RS256"],
      });
    });
  }
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl,
      resourceServerUrl: mcpUrl,
      scopesSupported: ["tools"],
      authorizationOptions: noLimit,
      tokenOptions: noLimit,
      clientRegistrationOptions: noLimit,
      revocationOptions: noLimit,
    }),
  );
  const advertise = options.advertiseResourceMetadata ?? true;
  const { requireBearerAuth } = (await import(BEARER_MODULE)) as { requireBearerAuth: RequireBearerAuth };
  const bearer: RequestHandler = options.open
    ? (_req, _res, next) => next()
    : requireBearerAuth({
        verifier: provider,
        expectedResource: mcpUrl,
        ...(advertise ? { resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl) } : {}),
      });
  app.post("/mcp", bearer, express.json(), async (req, res) => {
    const server = mcpServer(calls);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    // `req.auth` is the SDK's AuthInfo here (set by its bearer middleware), not the API's type.
    await transport.handleRequest(req as unknown as IncomingMessage, res, req.body);
  });
  app.all("/mcp", bearer, (_req, res) => {
    res.status(405).set("allow", "POST").end();
  });
  http.on("request", app);
  return {
    url: mcpUrl.href,
    issuer: issuerUrl.href,
    provider,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/**
 * Run directly (development only): the sample listens on 127.0.0.1:MCP_SAMPLE_PORT (default
 * 3920). Its authorization server approves everyone, so it refuses to start in production.
 */
async function main(): Promise<void> {
  if (process.env.NODE_ENV === "production") {
    console.error("the sample MCP server approves every authorization: it does not run with NODE_ENV=production");
    process.exit(1);
  }
  const sample = await startMcpServer({ port: Number(process.env.MCP_SAMPLE_PORT ?? 3920) });
  console.log(`sample MCP server: ${sample.url} (authorization server ${sample.issuer}); add this URL on the MCP page`);
  console.log(`the API reaches it only with MCP_ALLOW_PRIVATE_ORIGINS=${new URL(sample.url).origin} (development)`);
  const stop = () => void sample.close().then(() => process.exit(0));
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
