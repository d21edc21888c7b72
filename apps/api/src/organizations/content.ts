import { Prisma } from "@app/db";

/** A task a purge deleted (its open streams hear `task.deleted`). */
export interface PurgedTask {
  id: string;
  userId: string;
}

/** What a purge deleted: task rows, and the upload rows whose files the caller removes. */
export interface Purged {
  tasks: PurgedTask[];
  uploads: string[];
}

const NOTHING: Purged = { tasks: [], uploads: [] };

/**
 * Deletes tasks with their messages, events and attachments (the upload rows; the caller removes
 * the files). The task rows are locked first: a message being added commits before (and is
 * deleted here), a later one finds no task. Attachments go with their task here, while a deleted
 * task of a user's own keeps them as the user's uploads (tasks/service.ts): an organization's
 * content never lands in one member's space.
 */
export async function purgeTasks(tx: Prisma.TransactionClient, by: "id" | "project_id", ids: readonly string[]): Promise<Purged> {
  if (ids.length === 0) return NOTHING;
  const tasks = await tx.$queryRaw<Array<{ id: string; user_id: string }>>`
    SELECT id, user_id FROM task WHERE ${Prisma.raw(by)} IN (${Prisma.join(ids)}) ORDER BY id FOR UPDATE`;
  if (tasks.length === 0) return NOTHING;
  const taskIds = tasks.map((t) => t.id);
  const uploads = await tx.upload.findMany({ where: { taskMessage: { taskId: { in: taskIds } } }, select: { id: true } });
  if (uploads.length) await tx.upload.deleteMany({ where: { id: { in: uploads.map((u) => u.id) } } });
  await tx.task.deleteMany({ where: { id: { in: taskIds } } });
  return { tasks: tasks.map((t) => ({ id: t.id, userId: t.user_id })), uploads: uploads.map((u) => u.id) };
}

/**
 * Deletes projects with everything in them: tasks (as {@link purgeTasks}), chats with their
 * messages, agents. The project rows are locked first, so a task, chat or agent being written into
 * one commits before (and is deleted here) and a later one fails on its foreign key; without this,
 * the project's deletion would set their `project_id` to null and hand them to their authors.
 */
export async function purgeProjects(tx: Prisma.TransactionClient, projectIds: readonly string[]): Promise<Purged> {
  if (projectIds.length === 0) return NOTHING;
  await tx.$queryRaw`SELECT id FROM project WHERE id IN (${Prisma.join(projectIds)}) ORDER BY id FOR UPDATE`;
  const purged = await purgeTasks(tx, "project_id", projectIds);
  const where = { projectId: { in: [...projectIds] } };
  await tx.chat.deleteMany({ where });
  await tx.agent.deleteMany({ where });
  await tx.project.deleteMany({ where: { id: { in: [...projectIds] } } });
  return purged;
}
