import { createHmac, hkdfSync, randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import type { Prisma, PrismaClient } from "@app/db";

/**
 * What a mailed token is for; a token of one purpose never works for another. An email change
 * takes three: `confirm-email-change` to the current address (its `email` is the new one),
 * `change-email` to the new address, and `revert-email-change` to the old address once the change
 * is done (its `email` is the old one). `delete-account` confirms a deletion a stale session asked
 * for (services/account-settings.ts).
 */
export type TokenPurpose =
  | "reset-password"
  | "verify-email"
  | "change-email"
  | "confirm-email-change"
  | "revert-email-change"
  | "delete-account";

const HOUR = 60 * 60 * 1000;

/** How long a mailed link works. */
export const TOKEN_TTL_MS: Record<TokenPurpose, number> = {
  "reset-password": HOUR,
  "verify-email": 24 * HOUR,
  "change-email": 24 * HOUR,
  "confirm-email-change": 24 * HOUR,
  "revert-email-change": 7 * 24 * HOUR,
  // The mail ("confirm-delete", services/account-mail.ts) says an hour.
  "delete-account": HOUR,
};

/**
 * Revert links stay valid whatever happens to the account after them, until used or expired: a
 * later change, reset or verification may be the work of whoever the revert is meant to undo.
 */
const SURVIVES_OTHER_LINKS: TokenPurpose = "revert-email-change";

/**
 * A used verification link keeps its row, marked with this prefix on its purpose, until it
 * expires: opened again, it says the address is verified already instead of "invalid"
 * (routes/mailed-links.ts). A marked row is valid for no purpose, so it never works twice.
 */
const SPENT = "spent:";
const KEPT_WHEN_SPENT: readonly TokenPurpose[] = ["verify-email"];
const SPENT_PURPOSES = KEPT_WHEN_SPENT.map((p) => `${SPENT}${p}`);

/** A second mail of one purpose to one user within this time is not sent (the first still works). */
export const MAIL_COOLDOWN_MS = 60 * 1000;

/** Salt as in sessions.ts and packages/secret-box, with an info of its own: an independent key. */
const KDF_SALT = "token-auth-service";
const KDF_INFO = "mail-token-hmac";
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** A token row that was found and is still valid. */
export interface TokenGrant {
  userId: string;
  /** The address the link was sent to (the new address of an email change). */
  email: string;
}

/** A valid token found without using it up: which row, and what it is for. */
export interface FoundToken extends TokenGrant {
  id: string;
  purpose: TokenPurpose;
}

/**
 * Single-use tokens carried by mailed links (reset password, verify email, change email, delete
 * the account), in the lucia style of services/sessions.ts: 32 random bytes in the link, only their HMAC-SHA256 under
 * a key derived from AUTH_SECRET in the `verification` table, compared in constant time. A new
 * token of a purpose replaces the user's older ones (revert links: only the same address's); a
 * token is found first and spent by the transaction that acts on it, whose delete of its row
 * (a verification link's: its mark as spent) lets only one of two concurrent uses succeed;
 * expired rows never match and are purged by housekeeping.
 */
export class MailTokens {
  readonly #db: PrismaClient;
  readonly #key: Buffer;
  readonly #now: () => number;

  constructor(deps: { prisma: PrismaClient; authSecret: string; now?: () => number }) {
    this.#db = deps.prisma;
    this.#key = Buffer.from(hkdfSync("sha256", deps.authSecret, KDF_SALT, KDF_INFO, 32));
    this.#now = deps.now ?? Date.now;
  }

  #mac(token: string): Buffer {
    return createHmac("sha256", this.#key).update(token).digest();
  }

  /**
   * A new token for `userId`, or undefined when one of this purpose was issued less than
   * {@link MAIL_COOLDOWN_MS} ago (the caller then sends no mail and answers as if it had).
   * Inside `tx` when given: the mail outbox writes the mail's row in the token's transaction
   * (services/mail-outbox.ts), and mirrors these statements for an address without a token.
   */
  async issue(purpose: TokenPurpose, userId: string, email: string, tx?: Prisma.TransactionClient): Promise<string | undefined> {
    const now = this.#now();
    const db = tx ?? this.#db;
    const recent = await db.verification.findFirst({
      where: { userId, purpose, email, createdAt: { gt: new Date(now - MAIL_COOLDOWN_MS) }, expiresAt: { gt: new Date(now) } },
      select: { id: true },
    });
    if (recent) return undefined;
    const token = randomBytes(32).toString("base64url");
    const replace = (client: Prisma.TransactionClient | PrismaClient) => [
      // One live revert link per old address: every address an account left can still take it back.
      client.verification.deleteMany({ where: { userId, purpose, ...(purpose === SURVIVES_OTHER_LINKS ? { email } : {}) } }),
      client.verification.create({
        data: {
          id: randomUUID(),
          purpose,
          userId,
          email,
          tokenHash: new Uint8Array(this.#mac(token)),
          expiresAt: new Date(now + TOKEN_TTL_MS[purpose]),
          createdAt: new Date(now),
        },
      }),
    ];
    if (tx) for (const statement of replace(tx)) await statement;
    else await this.#db.$transaction(replace(this.#db));
    return token;
  }

  /** Withdraws a token whose mail could not be sent (so no live token exists without its mail). */
  async withdraw(token: string): Promise<void> {
    await this.#db.verification.deleteMany({ where: { tokenHash: new Uint8Array(this.#mac(token)) } });
  }

  /** The grant a valid token carries, without using it up (the reset link's redirect). */
  async peek(purpose: TokenPurpose, token: string): Promise<TokenGrant | undefined> {
    if (!TOKEN_SHAPE.test(token)) return undefined;
    const mac = this.#mac(token);
    const row = await this.#db.verification.findUnique({ where: { tokenHash: new Uint8Array(mac) } });
    return row && this.#valid(row, purpose, mac) ? { userId: row.userId, email: row.email } : undefined;
  }

  /**
   * The valid token of one of `purposes`, without using it up: links whose use costs work
   * (hashing a password) or asks for a click are checked first, then used with {@link spend}.
   */
  async find(purposes: readonly TokenPurpose[], token: string): Promise<FoundToken | undefined> {
    if (!TOKEN_SHAPE.test(token)) return undefined;
    const mac = this.#mac(token);
    const row = await this.#db.verification.findUnique({ where: { tokenHash: new Uint8Array(mac) } });
    if (!row || !purposes.some((p) => this.#valid(row, p, mac))) return undefined;
    return { id: row.id, userId: row.userId, email: row.email, purpose: row.purpose as TokenPurpose };
  }

  /**
   * Uses up a token {@link find} returned, inside the transaction that acts on it: false when a
   * concurrent use (or expiry) came first, and the transaction must then change nothing.
   */
  async spend(tx: Prisma.TransactionClient, found: FoundToken): Promise<boolean> {
    const where = { id: found.id, purpose: found.purpose, expiresAt: { gt: new Date(this.#now()) } };
    // Of two concurrent updates the second finds the row marked once the first commits: count 0.
    const { count } = KEPT_WHEN_SPENT.includes(found.purpose)
      ? await tx.verification.updateMany({ where, data: { purpose: `${SPENT}${found.purpose}` } })
      : await tx.verification.deleteMany({ where });
    return count === 1;
  }

  /**
   * True when `token` is a used verification link, not expired, whose user still has the address
   * it went to and has it verified: what opening the link again may say. Anything else (an
   * unknown, expired or unused token, an address changed since) is false, like an invalid link.
   */
  async verifiedBySpent(token: string): Promise<boolean> {
    if (!TOKEN_SHAPE.test(token)) return false;
    const mac = this.#mac(token);
    const row = await this.#db.verification.findUnique({
      where: { tokenHash: new Uint8Array(mac) },
      include: { user: { select: { email: true, emailVerified: true } } },
    });
    if (!row || !KEPT_WHEN_SPENT.some((p) => this.#valid(row, `${SPENT}${p}`, mac))) return false;
    return row.user.emailVerified && row.user.email === row.email;
  }

  /**
   * Ends the user's pending links inside `tx` when a mailbox proved the account's address: every
   * one but the revert links of an email change, or those too with `revertLinks`.
   */
  async endPending(tx: Prisma.TransactionClient, userId: string, options: { revertLinks?: boolean } = {}): Promise<void> {
    // A used link is pending no more: its mark stays until it expires.
    const kept = options.revertLinks ? SPENT_PURPOSES : [SURVIVES_OTHER_LINKS, ...SPENT_PURPOSES];
    await tx.verification.deleteMany({ where: { userId, purpose: { notIn: kept } } });
  }

  #valid(row: { purpose: string; tokenHash: Uint8Array; expiresAt: Date }, purpose: string, mac: Buffer): boolean {
    const stored = Buffer.from(row.tokenHash);
    if (stored.length !== mac.length || !timingSafeEqual(stored, mac)) return false;
    return row.purpose === purpose && row.expiresAt.getTime() > this.#now();
  }

  /** Deletes expired rows; returns how many. */
  async purgeExpired(): Promise<number> {
    const { count } = await this.#db.verification.deleteMany({ where: { expiresAt: { lte: new Date(this.#now()) } } });
    return count;
  }
}
