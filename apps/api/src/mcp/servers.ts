import type { CreateMcpServerBody, McpServerView, PageQuery, UpdateMcpServerBody } from "@app/contracts";
import { Prisma, type PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";
import type { OutboundUrlPolicy } from "@app/http-kit/outbound";
import type { SecretBox } from "@app/secret-box";
import { newId } from "../lib/ids.js";
import { keysetPage, type Page } from "../lib/pagination.js";
import { notFound } from "../lib/refs.js";

/** The status the API reports (a connected server without a token is an open one: it needs no authorization). */
function statusOf(s: Prisma.McpServerModel): McpServerView["status"] {
  if (s.status === "needs_reconnect") return "needs_reconnect";
  return s.status === "connected" ? "connected" : "not_connected";
}

/** The public view of an MCP server: never the client secret, the registration or a token. */
export function mcpServerView(s: Prisma.McpServerModel): McpServerView {
  const status = statusOf(s);
  const expiresAt = status === "connected" ? (s.tokenExpiresAt?.toISOString() ?? null) : null;
  const hasOverrides = s.authorizationUrl !== null || s.clientId !== null || s.scope !== null || s.issuer !== null;
  return {
    id: s.id,
    name: s.name,
    url: s.url,
    oauth: hasOverrides
      ? {
          authorizationUrl: s.authorizationUrl,
          tokenUrl: s.tokenUrl,
          clientId: s.clientId,
          scope: s.scope,
          issuer: s.issuer,
          hasClientSecret: s.clientSecret !== null,
        }
      : null,
    authorizationServer: s.authServerUrl,
    status,
    connected: status === "connected",
    connectedAt: s.connectedAt?.toISOString() ?? null,
    expiresAt,
    tokenExpiresAt: expiresAt,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

/** Encryption contexts: a sealed value only opens for the same server row and field. */
export const sealContext = (serverId: string, field: "client_secret" | "access_token" | "refresh_token") => `mcp:${serverId}:${field}`;

/** What a new URL or new overrides drop: tokens, and everything discovery and registration found. */
const NO_TOKENS = {
  accessToken: null,
  refreshToken: null,
  tokenExpiresAt: null,
  connectedAt: null,
  status: "not_connected",
  authServerUrl: null,
  authServerMeta: Prisma.DbNull,
  resource: null,
  registeredClient: null,
};

/**
 * MCP servers of one user, added by URL alone (OAuth settings are optional overrides). Changing
 * the URL or the overrides drops stored tokens and what connecting discovered. The server URL and
 * the endpoints must pass the outbound URL policy's static checks when saved (https in
 * production, no private or loopback address literal); every request checks again, with DNS.
 */
export class McpServersService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly box: SecretBox,
    private readonly policy: OutboundUrlPolicy,
  ) {}

  async list(userId: string, query: PageQuery): Promise<Page<McpServerView>> {
    const page = await keysetPage(query, ({ take, before }) =>
      this.prisma.mcpServer.findMany({ where: { userId, ...(before ? { id: { lt: before } } : {}) }, orderBy: { id: "desc" }, take }),
    );
    return { ...page, items: page.items.map(mcpServerView) };
  }

  /** The policy's static checks on the fields saved; 400 `validation_failed` naming each bad one. */
  #checkUrls(fields: Array<[string, string | undefined]>): void {
    const issues = fields.flatMap(([path, value]) => {
      const problem = value === undefined ? undefined : this.policy.problem(value);
      return problem ? [{ path, message: `${path.split(".").at(-1)} ${problem}` }] : [];
    });
    if (issues.length) throw new AppError("validation_failed", `invalid body: ${issues.map((i) => i.path).join(", ")}`, { issues });
  }

  #oauthData(id: string, oauth: CreateMcpServerBody["oauth"] | null) {
    if (!oauth) return { authorizationUrl: null, tokenUrl: null, clientId: null, clientSecret: null, scope: null, issuer: null };
    this.#checkUrls([
      ["oauth.authorizationUrl", oauth.authorizationUrl],
      ["oauth.tokenUrl", oauth.tokenUrl],
    ]);
    return {
      authorizationUrl: oauth.authorizationUrl ?? null,
      tokenUrl: oauth.tokenUrl ?? null,
      clientId: oauth.clientId ?? null,
      clientSecret: oauth.clientSecret ? this.box.seal(oauth.clientSecret, sealContext(id, "client_secret")) : null,
      scope: oauth.scope ?? null,
      issuer: oauth.issuer ?? null,
    };
  }

  async create(userId: string, body: CreateMcpServerBody): Promise<McpServerView> {
    const id = newId();
    this.#checkUrls([["url", body.url]]);
    const row = await this.prisma.mcpServer.create({
      data: { id, userId, name: body.name, url: body.url, ...this.#oauthData(id, body.oauth ?? null) },
    });
    return mcpServerView(row);
  }

  /** The row itself (for the OAuth flow); 404 when not the user's. */
  async row(userId: string, id: string): Promise<Prisma.McpServerModel> {
    const row = await this.prisma.mcpServer.findFirst({ where: { id, userId } });
    if (!row) throw notFound("MCP server");
    return row;
  }

  async get(userId: string, id: string): Promise<McpServerView> {
    return mcpServerView(await this.row(userId, id));
  }

  async update(userId: string, id: string, body: UpdateMcpServerBody): Promise<McpServerView> {
    const data: Prisma.McpServerUpdateManyMutationInput = {};
    if (body.name !== undefined) data.name = body.name;
    if (body.url !== undefined) this.#checkUrls([["url", body.url]]);
    if (body.url !== undefined) Object.assign(data, { url: body.url }, NO_TOKENS);
    if (body.oauth !== undefined) Object.assign(data, this.#oauthData(id, body.oauth), NO_TOKENS);
    const { count } = await this.prisma.mcpServer.updateMany({ where: { id, userId }, data });
    if (count === 0) throw notFound("MCP server");
    return this.get(userId, id);
  }

  async remove(userId: string, id: string): Promise<void> {
    const { count } = await this.prisma.mcpServer.deleteMany({ where: { id, userId } });
    if (count === 0) throw notFound("MCP server");
  }
}
