import { USER_DELETED_CHANNEL, USER_DELETION_TABLE, type UserDeletionRow } from "@app/contracts";
import { type Db, Prisma } from "@app/db";
import type { Logger } from "pino";
import { CoalescedPasses } from "../lib/coalesced-passes.js";
import { type Purged, type PurgedTask, purgeProjects, purgeTasks } from "../organizations/content.js";
import type { FileStore } from "../uploads/file-store.js";
import { type DeletedUsers, deletedUserOf } from "./deleted-users.js";

type PrismaClient = Db["prisma"];

/** Most deletions read from the outbox per pass (a pass repeats until none is left). */
const BATCH = 100;
/**
 * Class of the per-user advisory lock the tombstone trigger takes in shared mode on every insert
 * (prisma/migrations/20261126000000_api_deleted_user_writes): 0x75736572, "user".
 */
const USER_LOCK_CLASS = 1970496882;
/** The outbox identity writes (packages/contracts/src/user-deletion.ts). */
const OUTBOX = Prisma.raw(USER_DELETION_TABLE);

/** How the event bus feeds deletions to {@link UserDeletions}. */
export interface UserDeletionListener {
  channels: Record<string, (payload: string) => void>;
  /** Each time LISTEN is up, at start and after every reconnect. */
  onListening(): void;
}

/**
 * The API's part of deleting an account (docs/accounts.md, "Deleting an account"). Identity never
 * touches the API's tables: it inserts a `user_deletion` outbox row and NOTIFYs
 * `auth_user_deleted`. On that notification, at start and after the LISTEN connection comes back
 * (a notification sent while it was down is lost), every pending row (`api_done_at IS NULL`) is
 * worked off: the user's upload files first, then, in one transaction, every row the API keeps for
 * the user, and `api_done_at`. The row is claimed with `FOR UPDATE SKIP LOCKED`, so several API
 * instances share the work and never do one user twice at once; a pass that fails leaves the row
 * pending for the next trigger (the notification payload is only a trigger, the rows are the truth).
 * Each notification also tells this instance's {@link DeletedUsers} at once, and each time LISTEN
 * comes up it reads the outbox whole. A pass takes the user's advisory lock exclusively before it
 * reads anything: inserts of the user that started earlier commit first (and are deleted), later
 * ones find the outbox row and fail, so no row or file of the user outlives the pass.
 */
export class UserDeletions {
  readonly #prisma: PrismaClient;
  readonly #store: FileStore;
  readonly #logger: Logger;
  readonly #deleted: DeletedUsers;
  readonly #announceDeleted: ((tx: Prisma.TransactionClient, tasks: readonly PurgedTask[]) => Promise<void>) | undefined;
  readonly #passes: CoalescedPasses;

  /** `announceDeleted` tells open streams of organizations' tasks deleted with the user that they are gone. */
  constructor(
    prisma: PrismaClient,
    store: FileStore,
    logger: Logger,
    deleted: DeletedUsers,
    announceDeleted?: (tx: Prisma.TransactionClient, tasks: readonly PurgedTask[]) => Promise<void>,
  ) {
    this.#prisma = prisma;
    this.#store = store;
    this.#logger = logger;
    this.#deleted = deleted;
    this.#announceDeleted = announceDeleted;
    this.#passes = new CoalescedPasses(
      (reason) => this.#pass(reason),
      (reason, error) => logger.warn({ reason, err: (error as Error).message }, "user deletion pass failed; the next trigger retries"),
    );
  }

  /**
   * The event bus hooks: a notification names the user to {@link DeletedUsers} and starts a pass;
   * LISTEN coming up (start or reconnect) reloads the deleted users and starts a pass.
   */
  get listener(): UserDeletionListener {
    return {
      channels: {
        [USER_DELETED_CHANNEL]: (payload) => {
          const userId = deletedUserOf(payload);
          if (userId) this.#deleted.add(userId);
          void this.run("notified");
        },
      },
      onListening: () => {
        this.#deleted.load(this.#prisma).catch((error: Error) => {
          this.#logger.warn({ err: error.message }, "reading deleted users failed; the next reconnect retries");
        });
        void this.run("listening");
      },
    };
  }

  /**
   * Works off every pending deletion; resolves when done. Calls while a pass runs coalesce into one
   * more pass after it, so a deletion announced mid-pass is never missed. Never rejects.
   */
  run(reason = "start"): Promise<void> {
    return this.#passes.run(reason);
  }

  /** Stops starting passes; resolves when the one in progress ends. */
  close(): Promise<void> {
    return this.#passes.close();
  }

  async #pass(reason: string): Promise<void> {
    const seen = new Set<string>();
    for (;;) {
      const rows = await this.#prisma.$queryRaw<Pick<UserDeletionRow, "user_id">[]>`
        SELECT user_id FROM ${OUTBOX} WHERE api_done_at IS NULL ORDER BY requested_at LIMIT ${BATCH}`;
      const fresh = rows.map((r) => r.user_id).filter((id) => !seen.has(id));
      if (!fresh.length) return;
      for (const userId of fresh) {
        seen.add(userId);
        if (this.#passes.closed) return;
        if (await this.#deleteUser(userId)) this.#logger.info({ userId, reason }, "user's API data deleted");
      }
    }
  }

  /** Deletes one user's files and rows; false when another instance holds it or it is done. */
  #deleteUser(userId: string): Promise<boolean> {
    return this.#prisma.$transaction(
      async (tx) => {
        const claimed = await tx.$queryRaw<unknown[]>`
          SELECT user_id FROM ${OUTBOX} WHERE user_id = ${userId} AND api_done_at IS NULL FOR UPDATE SKIP LOCKED`;
        if (!claimed.length) return false;
        this.#deleted.add(userId);
        // Waits for the user's inserts in flight; later ones see the outbox row and fail.
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(${USER_LOCK_CLASS}::int, hashtext(${userId}))`;
        // Files first: if anything below fails the rows stay and the next pass deletes again, so a
        // file can never outlive its row unnoticed.
        const uploads = await tx.upload.findMany({ where: { userId }, select: { id: true } });
        await this.#store.remove(uploads.map((u) => u.id));
        const shared = await organizationsWork(tx, userId);
        await this.#store.remove(shared.uploads);
        await this.#announceDeleted?.(tx, shared.tasks);
        // Events and messages go with their task, chat messages with their chat, OAuth states with
        // their MCP server (ON DELETE CASCADE, prisma/schema.prisma).
        await tx.task.deleteMany({ where: { userId } });
        await tx.chat.deleteMany({ where: { userId } });
        await tx.agent.deleteMany({ where: { userId } });
        await tx.project.deleteMany({ where: { userId } });
        const late = await tx.$queryRaw<{ id: string }[]>`DELETE FROM upload WHERE user_id = ${userId} RETURNING id`;
        await tx.mcpServer.deleteMany({ where: { userId } });
        await tx.userRole.deleteMany({ where: { userId } });
        await tx.$executeRaw`UPDATE ${OUTBOX} SET api_done_at = now() WHERE user_id = ${userId}`;
        // Under the lock no upload row can appear after the read above; kept as a safety net.
        const known = new Set(uploads.map((u) => u.id));
        await this.#store.remove(late.map((u) => u.id).filter((id) => !known.has(id)));
        return true;
      },
      { timeout: 60_000, maxWait: 10_000 },
    );
  }
}

/**
 * The user's part of organizations' projects. Their tasks there go with every attachment (as an
 * organization's task deletion does), and the messages and events they wrote on other members'
 * tasks too. The projects they created stay with the organization: handed to its strongest
 * remaining member (owner, then admin, then member; not one whose account is being deleted), or,
 * with none left, deleted with everything they hold. Resolves with what was purged; the caller
 * removes the files and announces the tasks.
 */
async function organizationsWork(tx: Prisma.TransactionClient, userId: string): Promise<Purged> {
  const tasks = await tx.task.findMany({ where: { userId, project: { organizationId: { not: null } } }, select: { id: true } });
  const purged = await purgeTasks(
    tx,
    "id",
    tasks.map((t) => t.id),
  );
  await tx.taskMessage.deleteMany({ where: { userId } });
  await tx.taskEvent.deleteMany({ where: { userId } });
  const projects = await tx.project.findMany({
    where: { userId, organizationId: { not: null } },
    select: { id: true, organizationId: true },
  });
  const orphans: string[] = [];
  for (const organizationId of new Set(projects.map((p) => p.organizationId as string))) {
    const [heir] = await tx.$queryRaw<Array<{ user_id: string }>>`
      SELECT m.user_id FROM organization_membership m
      WHERE m.organization_id = ${organizationId} AND m.user_id <> ${userId}
        AND NOT EXISTS (SELECT 1 FROM ${OUTBOX} d WHERE d.user_id = m.user_id)
      ORDER BY (m.role LIKE '%owner%') DESC, (m.role LIKE '%admin%') DESC, m.user_id LIMIT 1`;
    if (heir) await tx.project.updateMany({ where: { userId, organizationId }, data: { userId: heir.user_id } });
    else orphans.push(...projects.filter((p) => p.organizationId === organizationId).map((p) => p.id));
  }
  const gone = await purgeProjects(tx, orphans);
  return { tasks: [...purged.tasks, ...gone.tasks], uploads: [...purged.uploads, ...gone.uploads] };
}

/** SQLSTATE of the tombstone trigger's refusal (prisma/migrations/20261126000000_api_deleted_user_writes). */
export const DELETED_USER_SQLSTATE = "AP401";

/**
 * True when a write was for an account that is deleted: the tombstone trigger refused the insert
 * (SQLSTATE AP401; Prisma wraps it as a driver adapter error, or as P2010 from raw SQL), or a
 * foreign key on `user_id` found the user row gone (Prisma P2003, or 23503 from raw SQL). That is
 * a JWT issued before its account was deleted, so the API answers 401 rather than 409 or 500 (app.ts).
 */
export function isMissingUser(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth += 1) {
    const e = current as { code?: unknown; meta?: Record<string, unknown>; constraint?: unknown; message?: unknown; cause?: unknown };
    const adapter = (e.meta?.driverAdapterError as { cause?: { code?: unknown } } | undefined)?.cause;
    if (e.code === DELETED_USER_SQLSTATE || adapter?.code === DELETED_USER_SQLSTATE) return true;
    const isFk =
      (current instanceof Prisma.PrismaClientKnownRequestError && current.code === "P2003") ||
      e.code === "23503" ||
      e.meta?.code === "23503";
    if (isFk) {
      const where = JSON.stringify([e.meta ?? null, e.constraint ?? null, e.message ?? null]);
      if (/_user_id_fkey/.test(where)) return true;
    }
    current = e.cause;
  }
  return false;
}
