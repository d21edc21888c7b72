import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { PrismaClient, Session, User } from "@app/db";

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/;

function hashSecret(secret: string): Buffer {
  return createHash("sha256").update(secret).digest();
}

/** Sessions one user may hold at once unless configured otherwise. */
export const DEFAULT_MAX_SESSIONS_PER_USER = 50;

/** A session with its user, as get-session needs them. */
export interface ActiveSession {
  session: Session;
  user: User;
  /** True when this lookup extended the expiry (the cookie should be written again). */
  refreshed: boolean;
}

/** Metadata recorded on a new session. */
export interface SessionMeta {
  ipAddress?: string | undefined;
  userAgent?: string | undefined;
}

/**
 * Cookie sessions in the lucia style: the cookie carries `<id>.<secret>`, the row stores only
 * SHA-256(secret), compared in constant time, so a database leak yields no usable cookie.
 * Expiry slides: a session used in the second half of its lifetime is extended.
 */
export class Sessions {
  readonly #db: PrismaClient;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #maxPerUser: number;

  constructor(deps: { prisma: PrismaClient; ttlMs: number; now?: () => number; maxPerUser?: number }) {
    this.#db = deps.prisma;
    this.#ttlMs = deps.ttlMs;
    this.#now = deps.now ?? Date.now;
    this.#maxPerUser = deps.maxPerUser ?? DEFAULT_MAX_SESSIONS_PER_USER;
  }

  /** Session lifetime in ms (also the cookie's Max-Age). */
  get ttlMs(): number {
    return this.#ttlMs;
  }

  /**
   * Inserts a session row and returns the cookie value for it. A user keeps at most
   * `maxPerUser` sessions: the oldest beyond that are deleted, so a sign-in flood on one account
   * cannot grow the table without bound between two purges.
   */
  async create(userId: string, meta: SessionMeta = {}): Promise<{ token: string; session: Session }> {
    const id = randomBytes(16).toString("base64url");
    const secret = randomBytes(32).toString("base64url");
    const session = await this.#db.session.create({
      data: {
        id,
        userId,
        secretHash: new Uint8Array(hashSecret(secret)),
        expiresAt: new Date(this.#now() + this.#ttlMs),
        ipAddress: meta.ipAddress?.slice(0, 64) ?? null,
        userAgent: meta.userAgent?.slice(0, 512) ?? null,
      },
    });
    await this.#db.$executeRaw`
      DELETE FROM "session" WHERE "user_id" = ${userId} AND "id" IN (
        SELECT "id" FROM "session" WHERE "user_id" = ${userId}
        ORDER BY "created_at" DESC, "id" DESC OFFSET ${this.#maxPerUser})`;
    return { token: `${id}.${secret}`, session };
  }

  /** Looks a cookie value up (one query), or undefined when it names no live session. */
  async validate(token: string | undefined): Promise<ActiveSession | undefined> {
    if (!token || !TOKEN_SHAPE.test(token)) return undefined;
    const [id = "", secret = ""] = token.split(".");
    const found = await this.#db.session.findUnique({ where: { id }, include: { user: true }, relationLoadStrategy: "join" });
    if (!found) return undefined;
    const expected = Buffer.from(found.secretHash);
    const actual = hashSecret(secret);
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined;
    const now = this.#now();
    if (found.expiresAt.getTime() <= now) {
      await this.#db.session.deleteMany({ where: { id } });
      return undefined;
    }
    const { user, ...session } = found;
    if (found.expiresAt.getTime() - now < this.#ttlMs / 2) {
      const expiresAt = new Date(now + this.#ttlMs);
      await this.#db.session.updateMany({ where: { id }, data: { expiresAt } });
      return { session: { ...session, expiresAt }, user, refreshed: true };
    }
    return { session, user, refreshed: false };
  }

  /** Deletes the session a cookie value names (if any). */
  async revoke(token: string | undefined): Promise<void> {
    if (!token || !TOKEN_SHAPE.test(token)) return;
    const active = await this.validate(token);
    if (active) await this.#db.session.deleteMany({ where: { id: active.session.id } });
  }

  /** Deletes expired rows; returns how many. */
  async purgeExpired(): Promise<number> {
    const { count } = await this.#db.session.deleteMany({ where: { expiresAt: { lte: new Date(this.#now()) } } });
    return count;
  }
}
