import type { AgentView, CreateAgentBody, PageQuery, UpdateAgentBody } from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import { newId } from "../lib/ids.js";
import { keysetPage, type Page } from "../lib/pagination.js";
import { assertProject, defined, notFound } from "../lib/refs.js";

/** The public view of an agent row. */
export function agentView(a: Prisma.AgentModel): AgentView {
  return {
    id: a.id,
    name: a.name,
    instructions: a.instructions,
    model: a.model,
    projectId: a.projectId,
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  };
}

/** Agents of one user; a referenced project must be the user's own. */
export class AgentsService {
  constructor(private readonly prisma: PrismaClient) {}

  async list(userId: string, query: PageQuery): Promise<Page<AgentView>> {
    const page = await keysetPage(query, ({ take, before }) =>
      this.prisma.agent.findMany({ where: { userId, ...(before ? { id: { lt: before } } : {}) }, orderBy: { id: "desc" }, take }),
    );
    return { ...page, items: page.items.map(agentView) };
  }

  async create(userId: string, body: CreateAgentBody): Promise<AgentView> {
    await assertProject(this.prisma, userId, body.projectId);
    const row = await this.prisma.agent.create({
      data: {
        id: newId(),
        userId,
        name: body.name,
        instructions: body.instructions ?? null,
        model: body.model ?? null,
        projectId: body.projectId ?? null,
      },
    });
    return agentView(row);
  }

  async get(userId: string, id: string): Promise<AgentView> {
    const row = await this.prisma.agent.findFirst({ where: { id, userId } });
    if (!row) throw notFound("agent");
    return agentView(row);
  }

  async update(userId: string, id: string, body: UpdateAgentBody): Promise<AgentView> {
    await assertProject(this.prisma, userId, body.projectId);
    const { count } = await this.prisma.agent.updateMany({ where: { id, userId }, data: defined(body) });
    if (count === 0) throw notFound("agent");
    return this.get(userId, id);
  }

  async remove(userId: string, id: string): Promise<void> {
    const { count } = await this.prisma.agent.deleteMany({ where: { id, userId } });
    if (count === 0) throw notFound("agent");
  }
}
