import type {
  AttachmentView,
  CreateTaskBody,
  PageQuery,
  ProjectContentQuery,
  TaskMessageView,
  TaskStatus,
  TaskView,
  UpdateTaskBody,
} from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import type { EventBus } from "../events/bus.js";
import { newId } from "../lib/ids.js";
import { keysetPage, type Page } from "../lib/pagination.js";
import { defined, notFound } from "../lib/refs.js";
import { containsText } from "../lib/text-match.js";
import { purgeTasks } from "../organizations/content.js";
import type { Action, Place } from "../organizations/membership.js";
import { type Places, placeOf, WITH_PLACE } from "../organizations/places.js";
import type { FileStore } from "../uploads/file-store.js";
import type { ReceivedFile } from "../uploads/multipart.js";

/** The public view of a task row. */
export function taskView(t: Prisma.TaskModel): TaskView {
  return {
    id: t.id,
    title: t.title,
    description: t.description,
    status: t.status as TaskStatus,
    projectId: t.projectId,
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}

function attachmentView(u: Prisma.UploadModel): AttachmentView {
  return { id: u.id, filename: u.filename, contentType: u.contentType, size: u.size };
}

/** The public view of a task message with its attachments. */
export function taskMessageView(m: Prisma.TaskMessageModel & { attachments: Prisma.UploadModel[] }): TaskMessageView {
  return { id: m.id, taskId: m.taskId, text: m.text, attachments: m.attachments.map(attachmentView), createdAt: m.createdAt.toISOString() };
}

/** A task the caller was authorized for, and where it is. */
export interface TaskAccess {
  id: string;
  place: Place;
}

/** Tasks outside organizations (no project, or a project of the user's own). */
const OUTSIDE_ORGANIZATIONS: Prisma.TaskWhereInput = { OR: [{ projectId: null }, { project: { organizationId: null } }] };

/**
 * Tasks, their messages, and the events they emit. A task in an organization's project is every
 * member's to read and write; any other task is its author's alone (organizations/places.ts).
 * A change and its event commit in one transaction (the task row is locked first, so one task's
 * event ids commit in order).
 */
export class TasksService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly bus: EventBus,
    private readonly places: Places,
    private readonly store: Pick<FileStore, "remove">,
  ) {}

  /**
   * `?projectId=`: that project's tasks (every member's in an organization's); else the user's own
   * outside organizations. With `match` (the MCP server's search), only those whose title or
   * description contains it.
   */
  async list(userId: string, query: ProjectContentQuery, match?: string): Promise<Page<TaskView>> {
    let where: Prisma.TaskWhereInput = { userId, ...OUTSIDE_ORGANIZATIONS };
    if (query.projectId) {
      const at = await this.places.inProject(userId, query.projectId, "read");
      where = at.organizationId === null ? { projectId: query.projectId, userId } : { projectId: query.projectId };
    }
    if (match !== undefined) where = { AND: [where, { OR: [{ title: containsText(match) }, { description: containsText(match) }] }] };
    const page = await keysetPage(query, ({ take, before }) =>
      this.prisma.task.findMany({ where: { ...where, ...(before ? { id: { lt: before } } : {}) }, orderBy: { id: "desc" }, take }),
    );
    return { ...page, items: page.items.map(taskView) };
  }

  async create(userId: string, body: CreateTaskBody): Promise<TaskView> {
    await this.places.create(userId, body.projectId);
    const row = await this.prisma.task.create({
      data: {
        id: newId(),
        userId,
        title: body.title,
        description: body.description ?? null,
        status: body.status ?? "pending",
        projectId: body.projectId ?? null,
      },
    });
    return taskView(row);
  }

  /**
   * Authorizes `action` on a task: one read of the task with its project's organization, and one
   * of the membership for an organization's task. 404 when it is neither the user's nor of one of
   * their organizations.
   */
  async authorize(userId: string, id: string, action: Action): Promise<TaskAccess & { row: Prisma.TaskModel }> {
    const row = await this.prisma.task.findUnique({ where: { id }, include: WITH_PLACE });
    if (!row) throw notFound("task");
    const place = placeOf(row);
    await this.places.memberships.require(userId, { at: place, action, kind: "task" });
    return { id, place, row };
  }

  /** The task's reader: undefined when the user may not read it; `shared` for an organization's task. */
  async readable(userId: string, id: string): Promise<{ shared: boolean } | undefined> {
    try {
      const { place } = await this.authorize(userId, id, "read");
      return { shared: place.organizationId !== null };
    } catch (error) {
      if ((error as { code?: unknown }).code === "not_found") return undefined;
      throw error;
    }
  }

  async get(userId: string, id: string): Promise<TaskView> {
    return taskView((await this.authorize(userId, id, "read")).row);
  }

  /** Updates a task (moving it only where the user may: organizations/places.ts) and emits `task.updated`. */
  async update(userId: string, id: string, body: UpdateTaskBody): Promise<TaskView> {
    const row = await this.prisma.task.findUnique({ where: { id }, include: WITH_PLACE });
    if (!row) throw notFound("task");
    await this.places.content(userId, placeOf(row), "write", "task", { projectId: body.projectId });
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.task.updateMany({ where: { id }, data: defined(body) });
      if (count === 0) throw notFound("task");
      const view = taskView(await tx.task.findUniqueOrThrow({ where: { id } }));
      await this.bus.append(tx, { taskId: id, userId, type: "task.updated", data: view });
      return view;
    });
  }

  /**
   * Deletes a task (its messages and event log go with it) and announces `task.deleted`. An
   * organization's task takes its attachments along (organizations/content.ts); the user's own
   * keeps them as the user's uploads.
   */
  async remove(userId: string, id: string): Promise<void> {
    const { place } = await this.authorize(userId, id, "write");
    if (place.organizationId === null) {
      await this.prisma.$transaction(async (tx) => {
        const { count } = await tx.task.deleteMany({ where: { id, userId } });
        if (count === 0) throw notFound("task");
        await this.bus.announce(tx, { taskId: id, userId, type: "task.deleted", data: { id } });
      });
      return;
    }
    const purged = await this.prisma.$transaction(async (tx) => {
      const gone = await purgeTasks(tx, "id", [id]);
      if (gone.tasks.length === 0) throw notFound("task");
      await this.bus.announceDeleted(tx, gone.tasks);
      return gone;
    });
    await this.store.remove(purged.uploads);
  }

  async listMessages(userId: string, taskId: string, query: PageQuery): Promise<Page<TaskMessageView>> {
    await this.authorize(userId, taskId, "read");
    const page = await keysetPage(query, ({ take, before: after }) =>
      this.prisma.taskMessage.findMany({
        where: { taskId, ...(after ? { id: { gt: after } } : {}) },
        orderBy: { id: "asc" },
        take,
        include: { attachments: { orderBy: { id: "asc" } } },
      }),
    );
    return { ...page, items: page.items.map(taskMessageView) };
  }

  /**
   * Adds a message (with already stored attachment files) and emits `message.created`. 404 when
   * the user may not write the task (`access`: already authorized by the caller); the caller
   * deletes the files if this throws.
   */
  async addMessage(
    userId: string,
    taskId: string,
    text: string,
    files: readonly ReceivedFile[] = [],
    access?: TaskAccess,
  ): Promise<TaskMessageView> {
    if (access?.id !== taskId) await this.authorize(userId, taskId, "write");
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.task.updateMany({ where: { id: taskId }, data: { updatedAt: new Date() } });
      if (count === 0) throw notFound("task");
      const id = newId();
      await tx.taskMessage.create({ data: { id, taskId, userId, text } });
      if (files.length > 0) {
        await tx.upload.createMany({
          data: files.map((f) => ({
            id: f.id,
            userId,
            taskMessageId: id,
            filename: f.filename,
            contentType: f.contentType,
            size: f.size,
            sha256: f.sha256,
          })),
        });
      }
      const row = await tx.taskMessage.findUniqueOrThrow({ where: { id }, include: { attachments: { orderBy: { id: "asc" } } } });
      const view = taskMessageView(row);
      await this.bus.append(tx, { taskId, userId, type: "message.created", data: view });
      return view;
    });
  }
}
