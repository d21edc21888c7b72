import type { PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";
import type { Action, Memberships, Need, Place } from "./membership.js";

/** How content rows (tasks, chats, agents) are read with the organization of their project. */
export const WITH_PLACE = { project: { select: { organizationId: true } } } as const;

/** Where content is: its project's organization, or its author's own when outside one. */
export function placeOf(row: { userId: string; project: { organizationId: string | null } | null }): Place {
  return { userId: row.userId, organizationId: row.project?.organizationId ?? null };
}

/**
 * The place of a row that does not exist: no user is "", so a need there answers 404 in its turn,
 * after the needs before it (a missing target never tells whether the row itself exists).
 */
const NOWHERE: Place = { userId: "", organizationId: null };

/** Where content goes when it moves: `projectId` of the target project, or null for out of any project. */
export interface Move {
  projectId: string | null | undefined;
}

/**
 * Access decisions on project-scoped rows, each at most one read of the membership view
 * (membership.ts) after the rows the decision is about.
 */
export class Places {
  constructor(
    private readonly prisma: PrismaClient,
    readonly memberships: Memberships,
  ) {}

  /** Where a project is ({@link NOWHERE} when none has this id). */
  async #project(id: string): Promise<Place> {
    return (await this.prisma.project.findUnique({ where: { id }, select: { userId: true, organizationId: true } })) ?? NOWHERE;
  }

  /** The need to read an agent a row refers to: its project's members, or its author (none: 404 `agent`). */
  async agentRef(agentId: string | null | undefined): Promise<Need[]> {
    if (!agentId) return [];
    const row = await this.prisma.agent.findUnique({ where: { id: agentId }, select: { userId: true, ...WITH_PLACE } });
    return [{ at: row ? placeOf(row) : NOWHERE, action: "read", kind: "agent" }];
  }

  /** Checks `action` on what project `projectId` holds (a list): a member's read, or its owner's. */
  async inProject(userId: string, projectId: string, action: Action): Promise<Place> {
    const at = await this.#project(projectId);
    await this.memberships.require(userId, { at, action, kind: "project" });
    return at;
  }

  /**
   * Checks that the user may `action` the content row at `at` (404 `kind` / 403) and, when
   * `move.projectId` is given, put it there: writing in the target project, or taking it out of any
   * project (null). Content lands outside organizations only by its author's hand (403 otherwise),
   * so no one hands another's work to its author's own space, or takes it into theirs.
   */
  async content(userId: string, at: Place, action: Action, kind: string, move?: Move, more: Need[] = []): Promise<void> {
    const needs: Need[] = [{ at, action, kind }];
    let to: Place | undefined;
    if (move?.projectId === null) to = { userId: at.userId, organizationId: null };
    else if (move?.projectId !== undefined) {
      to = await this.#project(move.projectId);
      needs.push({ at: to, action: "write", kind: "project" });
    }
    await this.memberships.require(userId, ...needs, ...more);
    if (to && to.organizationId === null && at.userId !== userId) {
      throw new AppError("forbidden", `only its author may take this ${kind} out of its organization`);
    }
  }

  /** Checks that new content of the user may go into `projectId` (none: the user's own). */
  async create(userId: string, projectId: string | null | undefined, more: Need[] = []): Promise<void> {
    const needs = [...(projectId ? [{ at: await this.#project(projectId), action: "write" as const, kind: "project" }] : []), ...more];
    await this.memberships.require(userId, ...needs);
  }
}
