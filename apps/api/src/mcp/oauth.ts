import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { McpCallbackQuery } from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";
import { type FetchLike, type OutboundUrlPolicy, pinnedFetch } from "@app/http-kit/outbound";
import type { SecretBox } from "@app/secret-box";
import { exchangeAuthorization, refreshAuthorization, startAuthorization } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Logger } from "pino";
import { McpConnections } from "./connection.js";
import { mcpError } from "./errors.js";
import { type McpServersService, sealContext } from "./servers.js";

/** How long an authorization may take from redirect to callback. */
export const OAUTH_STATE_TTL_MS = 10 * 60 * 1000;

/** Longest token lifetime believed (10 years); a larger `expires_in` is cut to it. */
export const MAX_TOKEN_LIFETIME_S = 10 * 365 * 24 * 3600;

/** An access token this close to its expiry is refreshed before use. */
export const REFRESH_MARGIN_MS = 60 * 1000;

/** The one answer to every failed code exchange, so its status and text reveal nothing about the target. */
export const EXCHANGE_FAILED = "authorization could not be completed";

const sha256 = (value: string) => createHash("sha256").update(value).digest();

/** Settings of {@link McpOAuthService}. */
export interface McpOAuthSettings {
  redirectUri: string;
  /** The outbound URL policy every discovered URL and endpoint must pass (connections pinned). */
  policy: OutboundUrlPolicy;
  logger: Logger;
  /** The policy-enforcing fetch handed to the SDK (default: {@link pinnedFetch} over `policy`). */
  fetchFn?: FetchLike;
  now?: () => number;
}

/** A started flow: where to send the browser, and the nonce to keep in its cookie; or a server that needs no authorization. */
export type BegunFlow = { location: string; nonce: string } | { open: true };

/**
 * OAuth 2.1 authorization code + PKCE (S256) for a user's MCP server, following the MCP
 * authorization specification with the SDK's helpers: discovery and registration live in
 * connection.ts; here the flow is started (`resource` sent, RFC 8707), finished and kept
 * alive by refresh. The state and the PKCE verifier stay server-side (only SHA-256 of the state is
 * the row key; the verifier is sealed), single use, for {@link OAUTH_STATE_TTL_MS}; the flow is
 * bound to the browser that started it by a nonce cookie (only its SHA-256 is stored). Every
 * request goes through the outbound policy; every failed exchange answers the same 400. Tokens are
 * stored sealed under DATA_ENCRYPTION_KEY.
 */
export class McpOAuthService {
  readonly #now: () => number;
  readonly #fetch: FetchLike;
  readonly #connections: McpConnections;
  /** One refresh at a time per server: a rotating refresh token must not be spent twice. */
  readonly #refreshing = new Map<string, Promise<string>>();

  constructor(
    private readonly prisma: PrismaClient,
    private readonly servers: McpServersService,
    private readonly box: SecretBox,
    private readonly settings: McpOAuthSettings,
  ) {
    this.#now = settings.now ?? Date.now;
    this.#fetch = settings.fetchFn ?? pinnedFetch({ resolve: (url) => settings.policy.resolve(url) });
    this.#connections = new McpConnections(prisma, box, { ...settings, fetchFn: this.#fetch });
  }

  /** The policy-enforcing fetch (shared with the tool calls). */
  get fetchFn(): FetchLike {
    return this.#fetch;
  }

  /**
   * Starts a flow: discovers (or reads the overrides), registers a client when none is known,
   * stores state, verifier and the nonce's hash; returns the redirect and the nonce for the cookie.
   */
  async begin(userId: string, serverId: string): Promise<BegunFlow> {
    const server = await this.servers.row(userId, serverId);
    const connection = await this.#connections.prepare(server);
    if (connection === "open") {
      const data = { status: "connected", connectedAt: new Date(this.#now()), accessToken: null, refreshToken: null, tokenExpiresAt: null };
      await this.prisma.mcpServer.update({ where: { id: server.id }, data });
      return { open: true };
    }
    const state = randomBytes(32).toString("base64url");
    const nonce = randomBytes(32).toString("base64url");
    const stateId = sha256(state).toString("hex");
    let started: Awaited<ReturnType<typeof startAuthorization>>;
    try {
      started = await startAuthorization(connection.authServerUrl, {
        metadata: connection.metadata,
        clientInformation: connection.client,
        redirectUrl: this.settings.redirectUri,
        state,
        resource: connection.resource,
        ...(connection.scope ? { scope: connection.scope } : {}),
      });
    } catch (cause) {
      throw mcpError("mcp_upstream_invalid", "the authorization server cannot do authorization code with PKCE S256", cause);
    }
    await this.purgeExpired();
    await this.prisma.mcpOAuthState.create({
      data: {
        id: stateId,
        userId,
        serverId,
        codeVerifier: this.box.seal(started.codeVerifier, `mcp-state:${stateId}`),
        nonceHash: sha256(nonce).toString("hex"),
        expiresAt: new Date(this.#now() + OAUTH_STATE_TTL_MS),
      },
    });
    return { location: started.authorizationUrl.toString(), nonce };
  }

  /**
   * Deletes the states whose time ran out (abandoned flows); returns how many. Runs on a schedule
   * and on every new flow, so the table cannot grow without bound.
   */
  async purgeExpired(): Promise<number> {
    const { count } = await this.prisma.mcpOAuthState.deleteMany({ where: { expiresAt: { lte: new Date(this.#now()) } } });
    return count;
  }

  /**
   * Finishes a flow: consumes the state, requires the nonce of the browser that started it and
   * the expected issuer (RFC 9207), exchanges the code with the verifier, stores the tokens.
   */
  async complete(query: McpCallbackQuery, nonce: string | undefined): Promise<{ serverId: string }> {
    const stateId = sha256(query.state).toString("hex");
    const pending = await this.prisma.$transaction(async (tx) => {
      const row = await tx.mcpOAuthState.findUnique({ where: { id: stateId } });
      if (!row) return undefined;
      const { count } = await tx.mcpOAuthState.deleteMany({ where: { id: stateId } });
      return count === 1 ? row : undefined;
    });
    if (!pending || pending.expiresAt.getTime() <= this.#now()) {
      throw new AppError("bad_request", "authorization state is unknown, used or expired; start again");
    }
    if (!sameNonce(nonce, pending.nonceHash)) {
      throw new AppError("bad_request", "this authorization was not started in this browser; start again");
    }
    if (query.error || !query.code) {
      throw new AppError("bad_request", `authorization was not granted${query.error ? `: ${query.error}` : ""}`);
    }
    const verifier = this.box.open(pending.codeVerifier, `mcp-state:${stateId}`);
    if (!verifier) throw new AppError("bad_request", "authorization state cannot be opened; start again");
    const server = await this.servers.row(pending.userId, pending.serverId);
    const connection = this.#connections.stored(server);
    if (!connection) throw new AppError("bad_request", "this MCP server is not set up for authorization; start again");
    const issuer = server.issuer ?? (server.authorizationUrl ? undefined : connection.metadata.issuer);
    const issRequired =
      server.issuer !== null ||
      (connection.metadata as { authorization_response_iss_parameter_supported?: unknown })
        .authorization_response_iss_parameter_supported === true;
    if (issuer && (query.iss !== undefined || issRequired) && query.iss !== issuer) {
      throw new AppError("bad_request", "the authorization response came from another issuer; start again");
    }
    let tokens: OAuthTokens;
    try {
      tokens = await exchangeAuthorization(connection.authServerUrl, {
        metadata: connection.metadata,
        clientInformation: connection.client,
        authorizationCode: query.code,
        codeVerifier: verifier,
        redirectUri: this.settings.redirectUri,
        resource: connection.resource,
        fetchFn: this.#fetch,
      });
    } catch (cause) {
      this.settings.logger.warn(
        { serverId: server.id, err: cause instanceof Error ? cause.message : undefined },
        "MCP token exchange failed",
      );
      throw new AppError("bad_request", EXCHANGE_FAILED, { cause });
    }
    await this.#store(server.id, tokens, null);
    return { serverId: server.id };
  }

  /**
   * A usable access token for the server: refreshed first when it expires within
   * {@link REFRESH_MARGIN_MS} (or when `force`, after the server refused it). Without one, or when
   * the refresh fails, the server is marked `needs_reconnect` and 409 `mcp_reconnect_required`
   * is thrown.
   */
  async accessToken(server: Prisma.McpServerModel, force = false): Promise<string | undefined> {
    if (server.status !== "connected") {
      throw mcpError("mcp_reconnect_required", "this MCP server is not connected: authorize it (GET /api/mcp-oauth/authorize)");
    }
    // Connected without a token: an open server; refused now, it wants an authorization.
    if (server.accessToken === null && !force) return undefined;
    const current = server.accessToken ? this.box.open(server.accessToken, sealContext(server.id, "access_token")) : undefined;
    if (!current) {
      await this.markNeedsReconnect(server.id);
      throw mcpError("mcp_reconnect_required", "this MCP server asks for an authorization: authorize it (GET /api/mcp-oauth/authorize)");
    }
    const expiring = server.tokenExpiresAt !== null && server.tokenExpiresAt.getTime() - REFRESH_MARGIN_MS <= this.#now();
    if (!force && !expiring) return current;
    const running = this.#refreshing.get(server.id);
    if (running) return running;
    const refresh = this.#refresh(server).finally(() => this.#refreshing.delete(server.id));
    this.#refreshing.set(server.id, refresh);
    return refresh;
  }

  /** Records that the server refused even fresh tokens: the user must authorize again. */
  async markNeedsReconnect(serverId: string): Promise<void> {
    await this.prisma.mcpServer.updateMany({ where: { id: serverId }, data: { status: "needs_reconnect" } });
  }

  async #refresh(server: Prisma.McpServerModel): Promise<string> {
    const refreshToken = server.refreshToken ? this.box.open(server.refreshToken, sealContext(server.id, "refresh_token")) : undefined;
    const connection = this.#connections.stored(server);
    try {
      if (!refreshToken || !connection) throw new Error("no refresh token");
      const tokens = await refreshAuthorization(connection.authServerUrl, {
        metadata: connection.metadata,
        clientInformation: connection.client,
        refreshToken,
        resource: connection.resource,
        fetchFn: this.#fetch,
      });
      await this.#store(server.id, tokens, refreshToken);
      return tokens.access_token;
    } catch (cause) {
      // Another instance may have spent the (rotating) refresh token first: its tokens win.
      const latest = await this.prisma.mcpServer.findUnique({ where: { id: server.id } });
      const theirs = latest?.status === "connected" && latest.accessToken !== server.accessToken ? latest.accessToken : null;
      const opened = theirs ? this.box.open(theirs, sealContext(server.id, "access_token")) : undefined;
      if (opened) return opened;
      this.settings.logger.warn(
        { serverId: server.id, err: cause instanceof Error ? cause.message : undefined },
        "MCP token refresh failed",
      );
      await this.markNeedsReconnect(server.id);
      throw mcpError("mcp_reconnect_required", "the MCP server's authorization expired or was revoked: authorize it again", cause);
    }
  }

  /** Stores tokens sealed; a refresh answer without a new refresh token keeps the old one (RFC 6749 §6). */
  async #store(serverId: string, tokens: OAuthTokens, previousRefresh: string | null): Promise<void> {
    const now = this.#now();
    const lifetime = tokens.expires_in && tokens.expires_in > 0 ? Math.min(tokens.expires_in, MAX_TOKEN_LIFETIME_S) : undefined;
    const refresh = tokens.refresh_token ?? previousRefresh;
    await this.prisma.mcpServer.update({
      where: { id: serverId },
      data: {
        accessToken: this.box.seal(tokens.access_token, sealContext(serverId, "access_token")),
        refreshToken: refresh ? this.box.seal(refresh, sealContext(serverId, "refresh_token")) : null,
        tokenExpiresAt: lifetime ? new Date(now + lifetime * 1000) : null,
        status: "connected",
        ...(previousRefresh === null ? { connectedAt: new Date(now) } : {}),
      },
    });
  }
}

/** Constant-time comparison of the cookie's nonce with the stored SHA-256 (hex); false when either is missing. */
function sameNonce(nonce: string | undefined, storedHex: string | null): boolean {
  if (!nonce || !storedHex || !/^[0-9a-f]{64}$/.test(storedHex)) return false;
  return timingSafeEqual(sha256(nonce), Buffer.from(storedHex, "hex"));
}
