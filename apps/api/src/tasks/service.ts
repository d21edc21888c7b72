import type { AttachmentView, CreateTaskBody, PageQuery, TaskMessageView, TaskStatus, TaskView, UpdateTaskBody } from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import type { EventBus } from "../events/bus.js";
import { newId } from "../lib/ids.js";
import { keysetPage, type Page } from "../lib/pagination.js";
import { assertProject, defined, notFound } from "../lib/refs.js";
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

/**
 * Tasks of one user, their messages, and the events they emit. A change and its event commit in
 * one transaction (the task row is locked first, so one task's event ids commit in order).
 */
export class TasksService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly bus: EventBus,
  ) {}

  async list(userId: string, query: PageQuery): Promise<Page<TaskView>> {
    const page = await keysetPage(query, ({ take, before }) =>
      this.prisma.task.findMany({ where: { userId, ...(before ? { id: { lt: before } } : {}) }, orderBy: { id: "desc" }, take }),
    );
    return { ...page, items: page.items.map(taskView) };
  }

  async create(userId: string, body: CreateTaskBody): Promise<TaskView> {
    await assertProject(this.prisma, userId, body.projectId);
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

  async get(userId: string, id: string): Promise<TaskView> {
    const row = await this.prisma.task.findFirst({ where: { id, userId } });
    if (!row) throw notFound("task");
    return taskView(row);
  }

  /** Updates a task and emits `task.updated` with the new state. */
  async update(userId: string, id: string, body: UpdateTaskBody): Promise<TaskView> {
    await assertProject(this.prisma, userId, body.projectId);
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.task.updateMany({ where: { id, userId }, data: defined(body) });
      if (count === 0) throw notFound("task");
      const view = taskView(await tx.task.findUniqueOrThrow({ where: { id } }));
      await this.bus.append(tx, { taskId: id, userId, type: "task.updated", data: view });
      return view;
    });
  }

  /** Deletes a task (its messages and event log go with it) and announces `task.deleted`. */
  async remove(userId: string, id: string): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.task.deleteMany({ where: { id, userId } });
      if (count === 0) throw notFound("task");
      await this.bus.announce(tx, { taskId: id, userId, type: "task.deleted", data: { id } });
    });
  }

  async listMessages(userId: string, taskId: string, query: PageQuery): Promise<Page<TaskMessageView>> {
    await this.get(userId, taskId);
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
   * the task is not the user's; the caller deletes the files if this throws.
   */
  async addMessage(userId: string, taskId: string, text: string, files: readonly ReceivedFile[] = []): Promise<TaskMessageView> {
    return this.prisma.$transaction(async (tx) => {
      const { count } = await tx.task.updateMany({ where: { id: taskId, userId }, data: { updatedAt: new Date() } });
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

  /** True when the task exists and is the user's (one query). */
  async owns(userId: string, taskId: string): Promise<boolean> {
    return (await this.prisma.task.count({ where: { id: taskId, userId } })) > 0;
  }
}
