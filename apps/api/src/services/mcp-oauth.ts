import { createHash, randomBytes } from "node:crypto";
import type { McpCallbackQuery } from "@app/contracts";
import type { PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";
import type { SecretBox } from "@app/secret-box";
import { z } from "zod";
import { readJsonCapped } from "../lib/read-capped.js";
import { type McpServersService, sealContext } from "./mcp-servers.js";

/** How long an authorization may take from redirect to callback. */
export const OAUTH_STATE_TTL_MS = 10 * 60 * 1000;

const tokenResponse = z.looseObject({
  access_token: z.string().min(1),
  refresh_token: z.string().min(1).optional(),
  expires_in: z.coerce.number().positive().optional(),
  token_type: z.string().optional(),
});

const sha256 = (value: string) => createHash("sha256").update(value).digest();

/** Settings of {@link McpOAuthService}. */
export interface McpOAuthSettings {
  redirectUri: string;
  fetch?: typeof fetch;
  now?: () => number;
}

/**
 * OAuth 2.1 authorization code + PKCE (S256) for a user's MCP server. The state and the PKCE
 * verifier stay server-side (only SHA-256 of the state is the row key; the verifier is sealed),
 * single use, for {@link OAUTH_STATE_TTL_MS}. The tokens obtained are stored sealed under
 * DATA_ENCRYPTION_KEY, bound to the server row.
 */
export class McpOAuthService {
  readonly #fetch: typeof fetch;
  readonly #now: () => number;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly servers: McpServersService,
    private readonly box: SecretBox,
    private readonly settings: McpOAuthSettings,
  ) {
    this.#fetch = settings.fetch ?? fetch;
    this.#now = settings.now ?? Date.now;
  }

  /** Starts a flow: stores state + verifier and returns the authorization server URL to redirect to. */
  async begin(userId: string, serverId: string): Promise<string> {
    const server = await this.servers.row(userId, serverId);
    if (!server.authorizationUrl || !server.tokenUrl || !server.clientId) {
      throw new AppError("bad_request", "this MCP server has no OAuth settings");
    }
    const state = randomBytes(32).toString("base64url");
    const verifier = randomBytes(32).toString("base64url");
    const stateId = sha256(state).toString("hex");
    const now = this.#now();
    await this.purgeExpired();
    await this.prisma.mcpOAuthState.create({
      data: {
        id: stateId,
        userId,
        serverId,
        codeVerifier: this.box.seal(verifier, `mcp-state:${stateId}`),
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
    return url.toString();
  }

  /**
   * Deletes the states whose time ran out (abandoned flows); returns how many. Runs on a schedule
   * and on every new flow, so the table cannot grow without bound.
   */
  async purgeExpired(): Promise<number> {
    const { count } = await this.prisma.mcpOAuthState.deleteMany({ where: { expiresAt: { lte: new Date(this.#now()) } } });
    return count;
  }

  /** Finishes a flow: consumes the state, exchanges the code with the verifier, stores the tokens. */
  async complete(query: McpCallbackQuery): Promise<{ serverId: string }> {
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
    if (query.error || !query.code) {
      throw new AppError("bad_request", `authorization was not granted${query.error ? `: ${query.error}` : ""}`);
    }
    const verifier = this.box.open(pending.codeVerifier, `mcp-state:${stateId}`);
    if (!verifier) throw new AppError("bad_request", "authorization state cannot be opened; start again");
    const server = await this.servers.row(pending.userId, pending.serverId);
    if (!server.tokenUrl || !server.clientId) throw new AppError("bad_request", "this MCP server has no OAuth settings");
    const form = new URLSearchParams({
      grant_type: "authorization_code",
      code: query.code,
      redirect_uri: this.settings.redirectUri,
      client_id: server.clientId,
      code_verifier: verifier,
    });
    const secret = server.clientSecret ? this.box.open(server.clientSecret, sealContext(server.id, "client_secret")) : undefined;
    if (secret) form.set("client_secret", secret);
    let response: Response;
    try {
      response = await this.#fetch(server.tokenUrl, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
        body: form,
        redirect: "error",
        signal: AbortSignal.timeout(10_000),
      });
    } catch (cause) {
      throw new AppError("service_unavailable", "the authorization server could not be reached", { cause });
    }
    const json = await readJsonCapped(response);
    if (response.status >= 500) throw new AppError("service_unavailable", "the authorization server failed");
    const parsed = tokenResponse.safeParse(json);
    if (!response.ok || !parsed.success) throw new AppError("bad_request", "the authorization server refused the code exchange");
    const tokens = parsed.data;
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
}
