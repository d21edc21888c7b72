import type { CreateProjectBody, ProjectListQuery, ProjectView, UpdateProjectBody } from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";
import { newId } from "../lib/ids.js";
import { keysetPage, type Page } from "../lib/pagination.js";
import { defined, notFound } from "../lib/refs.js";
import { containsText } from "../lib/text-match.js";
import { type PurgedTask, purgeProjects } from "../organizations/content.js";
import type { Memberships, Place } from "../organizations/membership.js";
import type { FileStore } from "../uploads/file-store.js";

/**
 * Class of the per-organization advisory lock that serialises project creations and moves into
 * one organization, so concurrent ones cannot pass its cap together: 0x6f726770, "orgp".
 */
const ORGANIZATION_PROJECTS_LOCK = 1869768560;

/** The public view of a project row. */
export function projectView(p: Prisma.ProjectModel): ProjectView {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    organizationId: p.organizationId,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}

/** What {@link ProjectsService} needs besides the database. */
export interface ProjectsDeps {
  memberships: Memberships;
  store: Pick<FileStore, "remove">;
  /** Announces `task.deleted` for the tasks a deleted organization project took along. */
  announceDeleted(tx: Prisma.TransactionClient, tasks: readonly PurgedTask[]): Promise<void>;
  /** Most projects one organization holds (MAX_PROJECTS_PER_ORGANIZATION). */
  maxPerOrganization: number;
}

/**
 * Projects: a user's own (theirs alone, someone else's is "not found") and organizations'
 * (`organizationId`): members read them and write what they hold, admins also rename and move
 * them, owners also delete them (organizations/membership.ts).
 */
export class ProjectsService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly deps: ProjectsDeps,
  ) {}

  /**
   * `?organizationId=`: that organization's projects (404 for a non-member); else the user's own.
   * With `match`, those whose name or description contains it.
   */
  async list(userId: string, query: ProjectListQuery, match?: string): Promise<Page<ProjectView>> {
    const { organizationId } = query;
    if (organizationId)
      await this.deps.memberships.require(userId, { at: { userId, organizationId }, action: "read", kind: "organization" });
    let where: Prisma.ProjectWhereInput = organizationId ? { organizationId } : { userId, organizationId: null };
    if (match !== undefined) where = { AND: [where, { OR: [{ name: containsText(match) }, { description: containsText(match) }] }] };
    const page = await keysetPage(query, ({ take, before }) =>
      this.prisma.project.findMany({ where: { ...where, ...(before ? { id: { lt: before } } : {}) }, orderBy: { id: "desc" }, take }),
    );
    return { ...page, items: page.items.map(projectView) };
  }

  async create(userId: string, body: CreateProjectBody): Promise<ProjectView> {
    const { organizationId, ...fields } = body;
    const data = { id: newId(), userId, name: fields.name, description: fields.description ?? null };
    if (!organizationId) return projectView(await this.prisma.project.create({ data }));
    await this.deps.memberships.require(userId, { at: { userId, organizationId }, action: "write", kind: "organization" });
    return this.prisma.$transaction(async (tx) => {
      await this.#makeRoom(tx, organizationId);
      return projectView(await tx.project.create({ data: { ...data, organizationId } }));
    });
  }

  async get(userId: string, id: string): Promise<ProjectView> {
    const row = await this.prisma.project.findUnique({ where: { id } });
    if (!row) throw notFound("project");
    await this.deps.memberships.require(userId, { at: row, action: "read", kind: "project" });
    return projectView(row);
  }

  /**
   * Renames, describes or moves a project: the owner of a project of their own, an admin or owner
   * of its organization. A move needs membership of the target organization and room under its cap.
   */
  async update(userId: string, id: string, body: UpdateProjectBody): Promise<ProjectView> {
    const row = await this.prisma.project.findUnique({ where: { id }, select: { userId: true, organizationId: true } });
    if (!row) throw notFound("project");
    const to = body.organizationId !== undefined && body.organizationId !== row.organizationId ? body.organizationId : undefined;
    const target: Place | undefined = to ? { userId, organizationId: to } : undefined;
    await this.deps.memberships.require(
      userId,
      { at: row, action: "manage", kind: "project" },
      ...(target ? [{ at: target, action: "write" as const, kind: "organization" }] : []),
    );
    return this.prisma.$transaction(async (tx) => {
      if (to) await this.#makeRoom(tx, to);
      const { count } = await tx.project.updateMany({ where: { id }, data: defined(body) });
      if (count === 0) throw notFound("project");
      return projectView(await tx.project.findUniqueOrThrow({ where: { id } }));
    });
  }

  /**
   * Deletes a project. Of the user's own: the project alone (its tasks, chats and agents stay the
   * user's, outside any project). Of an organization (its owners only): everything it holds too,
   * so none of it lands in one member's own space; their files are removed after the commit (a
   * failure there leaves files the upload sweep removes).
   */
  async remove(userId: string, id: string): Promise<void> {
    const row = await this.prisma.project.findUnique({ where: { id }, select: { userId: true, organizationId: true } });
    if (!row) throw notFound("project");
    await this.deps.memberships.require(userId, { at: row, action: "delete", kind: "project" });
    if (row.organizationId === null) {
      const { count } = await this.prisma.project.deleteMany({ where: { id, userId } });
      if (count === 0) throw notFound("project");
      return;
    }
    const uploads = await this.prisma.$transaction(
      async (tx) => {
        const purged = await purgeProjects(tx, [id]);
        await this.deps.announceDeleted(tx, purged.tasks);
        return purged.uploads;
      },
      { timeout: 60_000, maxWait: 10_000 },
    );
    await this.deps.store.remove(uploads);
  }

  /** Waits for the organization's other creations and moves, then refuses (409) at its cap. */
  async #makeRoom(tx: Prisma.TransactionClient, organizationId: string): Promise<void> {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ORGANIZATION_PROJECTS_LOCK}::int, hashtext(${organizationId}))`;
    const held = await tx.project.count({ where: { organizationId } });
    const max = this.deps.maxPerOrganization;
    if (held >= max) throw new AppError("conflict", `an organization holds at most ${max} projects: delete one before adding another`);
  }
}
