import type { AgentView, CreateAgentBody, ProjectContentQuery, UpdateAgentBody } from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import { newId } from "../lib/ids.js";
import { keysetPage, type Page } from "../lib/pagination.js";
import { defined, notFound } from "../lib/refs.js";
import type { Action } from "../organizations/membership.js";
import { type Places, placeOf, WITH_PLACE } from "../organizations/places.js";

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

/** Agents outside organizations (no project, or a project of the user's own). */
const OUTSIDE_ORGANIZATIONS: Prisma.AgentWhereInput = { OR: [{ projectId: null }, { project: { organizationId: null } }] };

/**
 * Agents: in an organization's project, every member's to read and write; otherwise their author's
 * alone (organizations/places.ts).
 */
export class AgentsService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly places: Places,
  ) {}

  /** `?projectId=`: that project's agents; else the user's own outside organizations. */
  async list(userId: string, query: ProjectContentQuery): Promise<Page<AgentView>> {
    let where: Prisma.AgentWhereInput = { userId, ...OUTSIDE_ORGANIZATIONS };
    if (query.projectId) {
      const at = await this.places.inProject(userId, query.projectId, "read");
      where = at.organizationId === null ? { projectId: query.projectId, userId } : { projectId: query.projectId };
    }
    const page = await keysetPage(query, ({ take, before }) =>
      this.prisma.agent.findMany({ where: { ...where, ...(before ? { id: { lt: before } } : {}) }, orderBy: { id: "desc" }, take }),
    );
    return { ...page, items: page.items.map(agentView) };
  }

  async create(userId: string, body: CreateAgentBody): Promise<AgentView> {
    await this.places.create(userId, body.projectId);
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

  /** The agent row, when the user may `action` it (404 / 403 otherwise). */
  async #authorized(userId: string, id: string, action: Action, projectId?: string | null) {
    const row = await this.prisma.agent.findUnique({ where: { id }, include: WITH_PLACE });
    if (!row) throw notFound("agent");
    await this.places.content(userId, placeOf(row), action, "agent", { projectId });
    return row;
  }

  async get(userId: string, id: string): Promise<AgentView> {
    return agentView(await this.#authorized(userId, id, "read"));
  }

  async update(userId: string, id: string, body: UpdateAgentBody): Promise<AgentView> {
    await this.#authorized(userId, id, "write", body.projectId);
    const { count } = await this.prisma.agent.updateMany({ where: { id }, data: defined(body) });
    if (count === 0) throw notFound("agent");
    return agentView(await this.prisma.agent.findUniqueOrThrow({ where: { id } }));
  }

  async remove(userId: string, id: string): Promise<void> {
    await this.#authorized(userId, id, "write");
    const { count } = await this.prisma.agent.deleteMany({ where: { id } });
    if (count === 0) throw notFound("agent");
  }
}
