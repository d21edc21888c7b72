import type { Prisma, PrismaClient } from "@app/db";
import type { FetchLike, OutboundUrlPolicy } from "@app/http-kit/outbound";
import type { SecretBox } from "@app/secret-box";
import type { AuthorizationServerMetadata, OAuthClientInformationMixed } from "@modelcontextprotocol/sdk/shared/auth.js";
import { resourceUrlFromServerUrl } from "@modelcontextprotocol/sdk/shared/auth-utils.js";
import { type Discovered, discover, register } from "./discovery.js";
import { sealContext } from "./servers.js";

/** Everything the SDK's authorization and token helpers need for one server. */
export interface Connection {
  authServerUrl: string;
  metadata: AuthorizationServerMetadata;
  client: OAuthClientInformationMixed;
  resource: string;
  scope: string | undefined;
}

/** Settings of {@link McpConnections}. */
export interface McpConnectionSettings {
  redirectUri: string;
  policy: OutboundUrlPolicy;
  fetchFn: FetchLike;
}

const registrationContext = (serverId: string) => `mcp:${serverId}:registered_client`;

/** The authorization server the overrides describe (no discovery needed). */
function overrideMetadata(server: Prisma.McpServerModel): Discovered | undefined {
  if (!server.authorizationUrl || !server.tokenUrl) return undefined;
  const issuer = server.issuer ?? new URL(server.authorizationUrl).origin;
  return {
    authServerUrl: issuer,
    metadata: {
      issuer,
      authorization_endpoint: server.authorizationUrl,
      token_endpoint: server.tokenUrl,
      response_types_supported: ["code"],
      code_challenge_methods_supported: ["S256"],
    },
    resource: resourceUrlFromServerUrl(server.url).href,
    scope: undefined,
  };
}

/**
 * Where an MCP server's authorization stands: the overrides saved with it (authorization and
 * token URLs, client id and secret) win; whatever they leave out is discovered from the server's
 * URL (./discovery.ts) and a client is registered dynamically. What was found is stored on the
 * row (the registration sealed: it may hold a secret), so the callback and later refreshes use
 * exactly the authorization server the user was sent to.
 */
export class McpConnections {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly box: SecretBox,
    private readonly settings: McpConnectionSettings,
  ) {}

  /** Discovers (unless overridden), registers (unless a client is known) and stores the result; "open" when no authorization is needed. */
  async prepare(server: Prisma.McpServerModel): Promise<Connection | "open"> {
    const found = overrideMetadata(server) ?? (await discover(server.url, this.settings.fetchFn, this.settings.policy));
    if (found === "open") return found;
    let client = this.#overrideClient(server);
    let registeredClient: string | undefined;
    if (!client) {
      const previous = this.#registered(server);
      const reusable =
        previous && server.authServerUrl === found.authServerUrl && previous.redirect_uris?.includes(this.settings.redirectUri);
      client = reusable ? previous : await register(found, this.settings.redirectUri, this.settings.fetchFn);
      if (!reusable) registeredClient = this.box.seal(JSON.stringify(client), registrationContext(server.id));
    }
    await this.prisma.mcpServer.update({
      where: { id: server.id },
      data: {
        authServerUrl: found.authServerUrl,
        authServerMeta: found.metadata as Prisma.InputJsonValue,
        resource: found.resource,
        ...(registeredClient ? { registeredClient } : {}),
      },
    });
    return { ...found, client, scope: server.scope ?? found.scope };
  }

  /** The connection as stored by the last {@link prepare}; undefined when there is none. */
  stored(server: Prisma.McpServerModel): Connection | undefined {
    const override = overrideMetadata(server);
    const metadata = override?.metadata ?? (server.authServerMeta as AuthorizationServerMetadata | null);
    const authServerUrl = override?.authServerUrl ?? server.authServerUrl;
    const client = this.#overrideClient(server) ?? this.#registered(server);
    if (!metadata || !authServerUrl || !client) return undefined;
    return {
      authServerUrl,
      metadata,
      client,
      resource: server.resource ?? resourceUrlFromServerUrl(server.url).href,
      scope: server.scope ?? undefined,
    };
  }

  #overrideClient(server: Prisma.McpServerModel): OAuthClientInformationMixed | undefined {
    if (!server.clientId) return undefined;
    const secret = server.clientSecret ? this.box.open(server.clientSecret, sealContext(server.id, "client_secret")) : undefined;
    return { client_id: server.clientId, ...(secret ? { client_secret: secret } : {}) };
  }

  #registered(server: Prisma.McpServerModel): (OAuthClientInformationMixed & { redirect_uris?: string[] }) | undefined {
    const opened = server.registeredClient ? this.box.open(server.registeredClient, registrationContext(server.id)) : undefined;
    if (!opened) return undefined;
    try {
      return JSON.parse(opened) as OAuthClientInformationMixed & { redirect_uris?: string[] };
    } catch {
      return undefined;
    }
  }
}
