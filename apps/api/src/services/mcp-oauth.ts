import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { McpCallbackQuery } from "@app/contracts";
import type { PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";
import type { SecretBox } from "@app/secret-box";
import type { Logger } from "pino";
import { z } from "zod";
import type { OutboundUrlPolicy } from "../lib/outbound-url.js";
import { type PinnedResponse, pinnedPost } from "../lib/pinned-request.js";
import { type McpServersService, sealContext } from "./mcp-servers.js";

/** How long an authorization may take from redirect to callback. */
export const OAUTH_STATE_TTL_MS = 10 * 60 * 1000;

/** Longest token lifetime believed (10 years); a larger `expires_in` is cut to it. */
export const MAX_TOKEN_LIFETIME_S = 10 * 365 * 24 * 3600;

/** The one answer to every failed code exchange, so its status and text reveal nothing about the target. */
export const EXCHANGE_FAILED = "authorization could not be completed";

const tokenResponse = z.looseObject({
  access_token: z.string().min(1),
  refresh_token: z.string().min(1).optional(),
  expires_in: z.coerce
    .number()
    .positive()
    .transform((s) => Math.min(s, MAX_TOKEN_LIFETIME_S))
    .optional(),
  token_type: z.string().optional(),
});

const sha256 = (value: string) => createHash("sha256").update(value).digest();

/** Sends the token request: POST `form` to `url` (after the outbound policy), answering status and body. */
export type TokenTransport = (url: string, form: URLSearchParams) => Promise<PinnedResponse>;

/** Settings of {@link McpOAuthService}. */
export interface McpOAuthSettings {
  redirectUri: string;
  /** The outbound URL policy the token URL must pass (checked on every exchange, connection pinned). */
  policy: OutboundUrlPolicy;
  logger: Logger;
  /** Replaces the pinned HTTP POST (tests). */
  transport?: TokenTransport;
  now?: () => number;
}

/** A started flow: where to send the browser, and the nonce to keep in its cookie. */
export interface BegunFlow {
  location: string;
  nonce: string;
}

/**
 * OAuth 2.1 authorization code + PKCE (S256) for a user's MCP server. The state and the PKCE
 * verifier stay server-side (only SHA-256 of the state is the row key; the verifier is sealed),
 * single use, for {@link OAUTH_STATE_TTL_MS}; the flow is bound to the browser that started it by
 * a nonce cookie (only its SHA-256 is stored). The token URL is user-chosen, so the exchange goes
 * through the outbound policy (public https addresses only, connection pinned, 64 KiB answer) and
 * every failure answers the same 400. The tokens are stored sealed under DATA_ENCRYPTION_KEY.
 */
export class McpOAuthService {
  readonly #now: () => number;
  readonly #transport: TokenTransport;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly servers: McpServersService,
    private readonly box: SecretBox,
    private readonly settings: McpOAuthSettings,
  ) {
    this.#now = settings.now ?? Date.now;
    this.#transport =
      settings.transport ??
      (async (url, form) =>
        pinnedPost(await settings.policy.resolve(url), {
          headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
          body: form.toString(),
        }));
  }

  /** Starts a flow: stores state, verifier and the nonce's hash; returns the redirect and the nonce for the cookie. */
  async begin(userId: string, serverId: string): Promise<BegunFlow> {
    const server = await this.servers.row(userId, serverId);
    if (!server.authorizationUrl || !server.tokenUrl || !server.clientId) {
      throw new AppError("bad_request", "this MCP server has no OAuth settings");
    }
    const state = randomBytes(32).toString("base64url");
    const verifier = randomBytes(32).toString("base64url");
    const nonce = randomBytes(32).toString("base64url");
    const stateId = sha256(state).toString("hex");
    const now = this.#now();
    await this.purgeExpired();
    await this.prisma.mcpOAuthState.create({
      data: {
        id: stateId,
        userId,
        serverId,
        codeVerifier: this.box.seal(verifier, `mcp-state:${stateId}`),
        nonceHash: sha256(nonce).toString("hex"),
        expiresAt: new Date(now + OAUTH_STATE_TTL_MS),
      },
    });
    const url = new URL(server.authorizationUrl);
    url.searchParams.set("response_type", "code");
    url.searchParams.set("client_id", server.clientId);
    url.searchParams.set("redirect_uri", this.settings.redirectUri);
    url.searchParams.set("state", state);
    url.searchParams.set("code_challenge", sha256(verifier).toString("base64url"));
    url.searchParams.set("code_challenge_method", "S256");
    if (server.scope) url.searchParams.set("scope", server.scope);
    return { location: url.toString(), nonce };
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
   * Finishes a flow: consumes the state, requires the nonce of the browser that started it (and
   * the configured issuer), exchanges the code with the verifier, stores the tokens.
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
    if (!server.tokenUrl || !server.clientId) throw new AppError("bad_request", "this MCP server has no OAuth settings");
    if (server.issuer && query.iss !== server.issuer) {
      throw new AppError("bad_request", "the authorization response came from another issuer; start again");
    }
    const form = new URLSearchParams({
      grant_type: "authorization_code",
      code: query.code,
      redirect_uri: this.settings.redirectUri,
      client_id: server.clientId,
      code_verifier: verifier,
    });
    const secret = server.clientSecret ? this.box.open(server.clientSecret, sealContext(server.id, "client_secret")) : undefined;
    if (secret) form.set("client_secret", secret);
    const tokens = await this.#exchange(server.id, server.tokenUrl, form);
    const now = this.#now();
    await this.prisma.mcpServer.update({
      where: { id: server.id },
      data: {
        accessToken: this.box.seal(tokens.access_token, sealContext(server.id, "access_token")),
        refreshToken: tokens.refresh_token ? this.box.seal(tokens.refresh_token, sealContext(server.id, "refresh_token")) : null,
        tokenExpiresAt: tokens.expires_in ? new Date(now + tokens.expires_in * 1000) : null,
        connectedAt: new Date(now),
      },
    });
    return { serverId: server.id };
  }

  /** The code exchange; any failure (policy, network, status, body) is logged here and answered with {@link EXCHANGE_FAILED}. */
  async #exchange(serverId: string, tokenUrl: string, form: URLSearchParams): Promise<z.output<typeof tokenResponse>> {
    const failed = (reason: string, cause?: unknown) => {
      this.settings.logger.warn({ serverId, reason, err: cause instanceof Error ? cause.message : undefined }, "MCP token exchange failed");
      return new AppError("bad_request", EXCHANGE_FAILED, cause === undefined ? {} : { cause });
    };
    let response: PinnedResponse;
    try {
      response = await this.#transport(tokenUrl, form);
    } catch (cause) {
      throw failed("token endpoint refused by policy or unreachable", cause);
    }
    if (response.status < 200 || response.status >= 300) throw failed(`token endpoint answered ${response.status}`);
    if (response.body === undefined) throw failed("token endpoint answer is too large");
    let json: unknown;
    try {
      json = JSON.parse(response.body);
    } catch {
      throw failed("token endpoint answer is not JSON");
    }
    const parsed = tokenResponse.safeParse(json);
    if (!parsed.success) throw failed("token endpoint answer has no usable access token");
    return parsed.data;
  }
}

/** Constant-time comparison of the cookie's nonce with the stored SHA-256 (hex); false when either is missing. */
function sameNonce(nonce: string | undefined, storedHex: string | null): boolean {
  if (!nonce || !storedHex || !/^[0-9a-f]{64}$/.test(storedHex)) return false;
  return timingSafeEqual(sha256(nonce), Buffer.from(storedHex, "hex"));
}
