import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import type { Prisma, PrismaClient, Session, User } from "@app/db";
import { AppError } from "@app/http-kit";
import { sessionsRevoked } from "./account-events.js";
import { rawRows, type SqlPool } from "./raw-query.js";
import { type SessionUserRow, sessionQuery, toSessionAndUser } from "./session-row.js";

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/;

/**
 * HKDF-SHA256 salt and info of the session key, with the salt packages/secret-box uses and an info
 * of its own, so the session key and the key that seals signing keys are independent.
 */
const KDF_SALT = "token-auth-service";
const KDF_INFO = "session-secret-hmac";

/** The HMAC key of session secrets, derived from AUTH_SECRET. */
export function sessionKey(authSecret: string): Buffer {
  return Buffer.from(hkdfSync("sha256", authSecret, KDF_SALT, KDF_INFO, 32));
}

/** The ban fields of a user. */
export type BanFields = Pick<User, "banned" | "banExpires">;

/**
 * True while an operator's ban holds (apps/identity/src/admin/): `banned`, and no `banExpires` or
 * one still ahead. A ban whose end has passed no longer applies; {@link Sessions.admit} lifts it.
 */
export function banInForce(user: BanFields, now: number): boolean {
  return user.banned && (user.banExpires === null || user.banExpires.getTime() > now);
}

/** What a banned user is told, on every sign-in method: nothing about the reason or the end. */
export const BANNED_MESSAGE = "this account is banned: contact support if you believe this is an error";

/** Sessions one user may hold at once unless configured otherwise. */
export const DEFAULT_MAX_SESSIONS_PER_USER = 50;

/** A session with its user, as get-session needs them. */
export interface ActiveSession {
  session: Session;
  user: User;
  /** True when this lookup extended the expiry (the cookie should be written again). */
  refreshed: boolean;
}

/** How a new session differs from a sign-in's (admin/impersonation.ts). */
export interface SessionOptions {
  /** The admin acting as the user: the session never slides and its JWTs carry `act`. */
  impersonatedBy?: string;
  /** A lifetime shorter than the configured one. */
  ttlMs?: number;
  /**
   * Writes the events of the sign-in in the session's transaction (sign-in/finish.ts), so the
   * session exists exactly when its events do. Without it the session is written alone.
   */
  within?: (tx: Prisma.TransactionClient, session: Session) => Promise<void>;
}

/** Metadata recorded on a new session. */
export interface SessionMeta {
  ipAddress?: string | undefined;
  userAgent?: string | undefined;
}

/**
 * Cookie sessions in the lucia style: the cookie carries `<id>.<secret>`, the row stores only
 * HMAC-SHA256(secret) under a key derived from AUTH_SECRET, compared in constant time, so a
 * database leak yields no usable cookie, and changing AUTH_SECRET signs everyone out (every stored
 * MAC stops matching) while a restart with the same secret keeps every session.
 * Expiry slides: a session used in the second half of its lifetime is extended (an impersonation
 * session never). A session of a banned user is no session: it is deleted when met.
 */
export class Sessions {
  readonly #db: PrismaClient;
  readonly #pool: SqlPool | undefined;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #maxPerUser: number;
  readonly #key: Buffer;

  /**
   * @param deps - `pool`: the `pg` pool under `prisma` (`Db.pool`); the hot read runs on it as raw
   *   SQL (without it, through Prisma's raw query API).
   */
  constructor(deps: {
    prisma: PrismaClient;
    pool?: SqlPool;
    authSecret: string;
    ttlMs: number;
    now?: () => number;
    maxPerUser?: number;
  }) {
    this.#db = deps.prisma;
    this.#key = sessionKey(deps.authSecret);
    this.#pool = deps.pool;
    this.#ttlMs = deps.ttlMs;
    this.#now = deps.now ?? Date.now;
    this.#maxPerUser = deps.maxPerUser ?? DEFAULT_MAX_SESSIONS_PER_USER;
  }

  #mac(secret: string): Buffer {
    return createHmac("sha256", this.#key).update(secret).digest();
  }

  /** Session lifetime in ms (also the cookie's Max-Age). */
  get ttlMs(): number {
    return this.#ttlMs;
  }

  /**
   * Inserts a session row and returns the cookie value for it. A user keeps at most
   * `maxPerUser` sessions: the oldest beyond that are deleted (each with its `session.revoked`
   * webhook), so a sign-in flood on one account cannot grow the table without bound between two
   * purges. With `options.within` the writes and the caller's events share one transaction.
   */
  async create(userId: string, meta: SessionMeta = {}, options: SessionOptions = {}): Promise<{ token: string; session: Session }> {
    const id = randomBytes(16).toString("base64url");
    const secret = randomBytes(32).toString("base64url");
    const ttlMs = Math.min(options.ttlMs ?? this.#ttlMs, this.#ttlMs);
    const write = async (db: Prisma.TransactionClient | PrismaClient) => {
      const session = await db.session.create({
        data: {
          id,
          userId,
          secretHash: new Uint8Array(this.#mac(secret)),
          expiresAt: new Date(this.#now() + ttlMs),
          ipAddress: meta.ipAddress?.slice(0, 64) ?? null,
          userAgent: meta.userAgent?.slice(0, 512) ?? null,
          impersonatedBy: options.impersonatedBy ?? null,
        },
      });
      const dropped = await db.$queryRaw<{ id: string }[]>`
        DELETE FROM "session" WHERE "user_id" = ${userId} AND "id" IN (
          SELECT "id" FROM "session" WHERE "user_id" = ${userId}
          ORDER BY "created_at" DESC, "id" DESC OFFSET ${this.#maxPerUser})
        RETURNING "id"`;
      await sessionsRevoked(
        db,
        userId,
        dropped.map((row) => row.id),
        "session_limit",
      );
      return session;
    };
    const token = `${id}.${secret}`;
    const { within } = options;
    if (!within) return { token, session: await write(this.#db) };
    const session = await this.#db.$transaction(async (tx) => {
      const created = await write(tx);
      await within(tx, created);
      return created;
    });
    return { token, session };
  }

  /** The Prisma client sessions are stored with (sign-in/finish.ts records sign-in failures with it). */
  get client(): PrismaClient {
    return this.#db;
  }

  /**
   * The user a sign-in may open a session for (sign-in/finish.ts, every method): 403 `banned`
   * while a ban holds; a ban whose end has passed is lifted here (the row is cleared) and the
   * user returned without it.
   */
  async admit(user: User): Promise<User> {
    if (!user.banned) return user;
    const now = this.#now();
    if (banInForce(user, now)) throw new AppError("banned", BANNED_MESSAGE);
    await this.#liftExpiredBan(user.id, now);
    return { ...user, banned: false, banReason: null, banExpires: null };
  }

  /** Clears a ban whose end has passed (a concurrent new ban, with a later end, stays). */
  async #liftExpiredBan(userId: string, now: number): Promise<void> {
    await this.#db.user.updateMany({
      where: { id: userId, banned: true, banExpires: { lte: new Date(now) } },
      data: { banned: false, banReason: null, banExpires: null },
    });
  }

  /**
   * Looks a cookie value up (one query: session join user by id, raw SQL), or undefined when it
   * names no live session. The secret's hash is compared in constant time; an expired row, and
   * any session of a banned user, is deleted; a ban whose end has passed is lifted; a session in
   * the second half of its lifetime is extended, unless it is an impersonation.
   */
  async validate(token: string | undefined): Promise<ActiveSession | undefined> {
    if (!token || !TOKEN_SHAPE.test(token)) return undefined;
    const [id = "", secret = ""] = token.split(".");
    const [row] = await rawRows<SessionUserRow>(this.#db, this.#pool, sessionQuery(id));
    if (!row) return undefined;
    const expected = Buffer.from(row.secret_hash);
    const actual = this.#mac(secret);
    if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) return undefined;
    const now = this.#now();
    const banned = banInForce({ banned: row.u_banned, banExpires: row.u_ban_expires }, now);
    if (row.expires_at.getTime() <= now || banned) {
      await this.#db.session.deleteMany({ where: { id } });
      return undefined;
    }
    let { session, user } = toSessionAndUser(row);
    if (user.banned) {
      await this.#liftExpiredBan(user.id, now);
      user = { ...user, banned: false, banReason: null, banExpires: null };
    }
    if (session.impersonatedBy === null && session.expiresAt.getTime() - now < this.#ttlMs / 2) {
      const expiresAt = new Date(now + this.#ttlMs);
      await this.#db.session.updateMany({ where: { id }, data: { expiresAt } });
      return { session: { ...session, expiresAt }, user, refreshed: true };
    }
    return { session, user, refreshed: false };
  }

  /**
   * Deletes the session a cookie value names (if any). With `within` (sign-out) the delete and the
   * caller's events share a transaction, and `within` runs only when this request removed it.
   */
  async revoke(token: string | undefined, within?: (tx: Prisma.TransactionClient, ended: ActiveSession) => Promise<void>): Promise<void> {
    if (!token || !TOKEN_SHAPE.test(token)) return;
    const active = await this.validate(token);
    if (!active) return;
    if (!within) {
      await this.#db.session.deleteMany({ where: { id: active.session.id } });
      return;
    }
    await this.#db.$transaction(async (tx) => {
      const { count } = await tx.session.deleteMany({ where: { id: active.session.id } });
      if (count === 1) await within(tx, active);
    });
  }

  /** Deletes expired rows; returns how many. */
  async purgeExpired(): Promise<number> {
    const { count } = await this.#db.session.deleteMany({ where: { expiresAt: { lte: new Date(this.#now()) } } });
    return count;
  }

  /**
   * Deletes expired single-use challenges (pending second factors, WebAuthn challenges, emailed
   * codes and links) and trusted devices; returns how many. Their flows refuse an expired row
   * anyway: this keeps requests that never finish from growing the tables.
   */
  async purgeExpiredChallenges(): Promise<number> {
    const lte = new Date(this.#now());
    const [challenges, devices] = await this.#db.$transaction([
      this.#db.authChallenge.deleteMany({ where: { expiresAt: { lte } } }),
      this.#db.trustedDevice.deleteMany({ where: { expiresAt: { lte } } }),
    ]);
    return challenges.count + devices.count;
  }
}
