import type { PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";

/** 404 `not_found` for a row that does not exist or belongs to someone else (never 403: no leak). */
export function notFound(kind: string): AppError {
  return new AppError("not_found", `${kind} not found`);
}

/** Checks that a referenced project belongs to the user (null/undefined: nothing to check). */
export async function assertProject(prisma: PrismaClient, userId: string, projectId: string | null | undefined): Promise<void> {
  if (!projectId) return;
  const found = await prisma.project.findFirst({ where: { id: projectId, userId }, select: { id: true } });
  if (!found) throw notFound("project");
}

/** Checks that a referenced agent belongs to the user (null/undefined: nothing to check). */
export async function assertAgent(prisma: PrismaClient, userId: string, agentId: string | null | undefined): Promise<void> {
  if (!agentId) return;
  const found = await prisma.agent.findFirst({ where: { id: agentId, userId }, select: { id: true } });
  if (!found) throw notFound("agent");
}

/** Drops keys whose value is `undefined`, so a PATCH only touches the fields it names. */
export function defined<T extends object>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> };
}
