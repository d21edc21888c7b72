import type { CreateProjectBody, PageQuery, ProjectView, UpdateProjectBody } from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import { newId } from "../lib/ids.js";
import { keysetPage, type Page } from "../lib/pagination.js";
import { defined, notFound } from "../lib/refs.js";

/** The public view of a project row. */
export function projectView(p: Prisma.ProjectModel): ProjectView {
  return { id: p.id, name: p.name, description: p.description, createdAt: p.createdAt.toISOString(), updatedAt: p.updatedAt.toISOString() };
}

/** Projects of one user; someone else's project is "not found". */
export class ProjectsService {
  constructor(private readonly prisma: PrismaClient) {}

  async list(userId: string, query: PageQuery): Promise<Page<ProjectView>> {
    const page = await keysetPage(query, ({ take, before }) =>
      this.prisma.project.findMany({ where: { userId, ...(before ? { id: { lt: before } } : {}) }, orderBy: { id: "desc" }, take }),
    );
    return { ...page, items: page.items.map(projectView) };
  }

  async create(userId: string, body: CreateProjectBody): Promise<ProjectView> {
    const row = await this.prisma.project.create({ data: { id: newId(), userId, name: body.name, description: body.description ?? null } });
    return projectView(row);
  }

  async get(userId: string, id: string): Promise<ProjectView> {
    const row = await this.prisma.project.findFirst({ where: { id, userId } });
    if (!row) throw notFound("project");
    return projectView(row);
  }

  async update(userId: string, id: string, body: UpdateProjectBody): Promise<ProjectView> {
    const { count } = await this.prisma.project.updateMany({ where: { id, userId }, data: defined(body) });
    if (count === 0) throw notFound("project");
    return this.get(userId, id);
  }

  async remove(userId: string, id: string): Promise<void> {
    const { count } = await this.prisma.project.deleteMany({ where: { id, userId } });
    if (count === 0) throw notFound("project");
  }
}
