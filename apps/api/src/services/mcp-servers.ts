import type { CreateMcpServerBody, McpServerView, PageQuery, UpdateMcpServerBody } from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";
import type { SecretBox } from "@app/secret-box";
import { newId } from "../lib/ids.js";
import type { OutboundUrlPolicy } from "../lib/outbound-url.js";
import { keysetPage, type Page } from "../lib/pagination.js";
import { notFound } from "./refs.js";

/** The public view of an MCP server: never the client secret or a token. */
export function mcpServerView(s: Prisma.McpServerModel): McpServerView {
  return {
    id: s.id,
    name: s.name,
    url: s.url,
    oauth:
      s.authorizationUrl && s.tokenUrl && s.clientId
        ? {
            authorizationUrl: s.authorizationUrl,
            tokenUrl: s.tokenUrl,
            clientId: s.clientId,
            scope: s.scope,
            issuer: s.issuer,
            hasClientSecret: s.clientSecret !== null,
          }
        : null,
    connected: s.accessToken !== null,
    connectedAt: s.connectedAt?.toISOString() ?? null,
    tokenExpiresAt: s.tokenExpiresAt?.toISOString() ?? null,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
  };
}

/** Encryption contexts: a sealed value only opens for the same server row and field. */
export const sealContext = (serverId: string, field: "client_secret" | "access_token" | "refresh_token") => `mcp:${serverId}:${field}`;

const NO_TOKENS = { accessToken: null, refreshToken: null, tokenExpiresAt: null, connectedAt: null };

/**
 * MCP servers of one user. Changing the URL or OAuth settings drops stored tokens. The OAuth
 * endpoints must pass the outbound URL policy's static checks when saved (https in production,
 * no private or loopback address literal); the token URL is checked again, with DNS, on use.
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

  #oauthData(id: string, oauth: CreateMcpServerBody["oauth"] | null) {
    if (!oauth) return { authorizationUrl: null, tokenUrl: null, clientId: null, clientSecret: null, scope: null, issuer: null };
    const issues = (["authorizationUrl", "tokenUrl"] as const).flatMap((field) => {
      const problem = this.policy.problem(oauth[field]);
      return problem ? [{ path: `oauth.${field}`, message: `${field} ${problem}` }] : [];
    });
    if (issues.length) throw new AppError("validation_failed", "invalid body: oauth", { issues });
    return {
      authorizationUrl: oauth.authorizationUrl,
      tokenUrl: oauth.tokenUrl,
      clientId: oauth.clientId,
      clientSecret: oauth.clientSecret ? this.box.seal(oauth.clientSecret, sealContext(id, "client_secret")) : null,
      scope: oauth.scope ?? null,
      issuer: oauth.issuer ?? null,
    };
  }

  async create(userId: string, body: CreateMcpServerBody): Promise<McpServerView> {
    const id = newId();
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
