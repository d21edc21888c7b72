import { createHmac, hkdfSync, randomBytes, randomInt, randomUUID, timingSafeEqual } from "node:crypto";
import { EMAIL_OTP_ATTEMPTS, EMAIL_OTP_LENGTH, type EmailOtpType, emailSchema, PASSWORDLESS_TTL_MS } from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";
import { SecretBox } from "@app/secret-box";
import { refusedFor } from "../sign-in/failures.js";

/** Salt as in services/mail-outbox.ts and packages/secret-box, with infos of its own: independent keys. */
const KDF_SALT = "token-auth-service";
const SUBJECT_INFO = "auth-challenge-subject";
const SECRET_INFO = "auth-challenge-secret";
const SEAL_PURPOSE = "auth-challenge";

/** The challenge rows of sign-in by mail (table `auth_challenge`). */
export const MAGIC_LINK = "magic-link";
export type CodePurpose = `email-otp:${EmailOtpType}`;
export const codePurpose = (type: EmailOtpType): CodePurpose => `email-otp:${type}`;

/** What a magic link stands for: sealed in its row, so the table holds no address. */
export interface MagicLinkGrant {
  id: string;
  email: string;
  name?: string | undefined;
}

/** A code that matched (its row, not yet spent). */
export interface MatchedCode {
  id: string;
  /** The account the code went to, when the address had one then. */
  userId: string | null;
}

const invalidCode = () => new AppError("invalid_code", "the code is wrong, used or replaced by a newer one");

/**
 * The secrets of sign-in by mail, in `auth_challenge`: a row per emailed code or magic link,
 * keyed by an HMAC of the normalised address (`subject`), holding only an HMAC of its secret
 * (keyed from AUTH_SECRET: a stolen table guesses nothing offline) and, for a link, its address
 * sealed. Codes are six digits from node:crypto's randomInt; a link is 32 random bytes.
 */
export class MailChallenges {
  readonly #db: PrismaClient;
  readonly #now: () => number;
  readonly #subjectKey: Buffer;
  readonly #secretKey: Buffer;
  readonly #box: SecretBox;

  constructor(deps: { prisma: PrismaClient; authSecret: string; now: () => number }) {
    this.#db = deps.prisma;
    this.#now = deps.now;
    this.#subjectKey = Buffer.from(hkdfSync("sha256", deps.authSecret, KDF_SALT, SUBJECT_INFO, 32));
    this.#secretKey = Buffer.from(hkdfSync("sha256", deps.authSecret, KDF_SALT, SECRET_INFO, 32));
    this.#box = new SecretBox(deps.authSecret, SEAL_PURPOSE);
  }

  /** The row key of an address: an HMAC of its normalised form (emailSchema), as the outbox keys its budget. */
  subject(address: string): string {
    const parsed = emailSchema.safeParse(address);
    const normalised = parsed.success ? parsed.data : address.trim().toLowerCase();
    return createHmac("sha256", this.#subjectKey).update(normalised).digest("base64url");
  }

  /** A new emailed code: {@link EMAIL_OTP_LENGTH} uniformly random digits. */
  newCode(): string {
    return String(randomInt(0, 10 ** EMAIL_OTP_LENGTH)).padStart(EMAIL_OTP_LENGTH, "0");
  }

  /** A new magic link's token: 32 random bytes. */
  newToken(): string {
    return randomBytes(32).toString("base64url");
  }

  #mac(...parts: string[]): Uint8Array<ArrayBuffer> {
    return new Uint8Array(createHmac("sha256", this.#secretKey).update(parts.join("\n")).digest());
  }

  /**
   * In `tx`: `code` becomes the one code of `purpose` for `email` (older ones end), valid
   * {@link PASSWORDLESS_TTL_MS} and {@link EMAIL_OTP_ATTEMPTS} tries.
   */
  async putCode(tx: Prisma.TransactionClient, purpose: CodePurpose, email: string, code: string, userId: string | undefined) {
    const subject = this.subject(email);
    const now = this.#now();
    await tx.authChallenge.deleteMany({ where: { purpose, subject } });
    await tx.authChallenge.create({
      data: {
        id: randomUUID(),
        purpose,
        subject,
        secretHash: this.#mac(purpose, subject, code),
        userId: userId ?? null,
        expiresAt: new Date(now + PASSWORDLESS_TTL_MS),
        createdAt: new Date(now),
      },
    });
  }

  /**
   * Checks a typed code. Each try is claimed before the comparison (one atomic update), so
   * concurrent guesses cannot exceed the tries; a match is left for the caller to spend in the
   * transaction of its effect. 401 `invalid_code` (wrong, none, used), 400 `code_expired`,
   * 403 `too_many_attempts` once the tries are spent, whatever the code.
   */
  async match(purpose: CodePurpose, email: string, code: string): Promise<MatchedCode> {
    const subject = this.subject(email);
    const row = await this.#db.authChallenge.findFirst({ where: { purpose, subject }, orderBy: { createdAt: "desc" } });
    if (!row) throw invalidCode();
    // A refusal of a code that went to an account names it in the failure event (sign-in/failures.ts).
    const refused = (error: AppError) => refusedFor(error, row.userId);
    if (row.expiresAt.getTime() <= this.#now()) {
      await this.#db.authChallenge.deleteMany({ where: { id: row.id } });
      throw refused(new AppError("code_expired", "the code has expired: ask for a new one"));
    }
    const claimed = await this.#db.authChallenge.updateMany({
      where: { id: row.id, attempts: { lt: EMAIL_OTP_ATTEMPTS } },
      data: { attempts: { increment: 1 } },
    });
    if (claimed.count === 0) {
      if (row.attempts >= EMAIL_OTP_ATTEMPTS || (await this.#db.authChallenge.count({ where: { id: row.id } })) > 0)
        throw refused(new AppError("too_many_attempts", "too many wrong codes: ask for a new one"));
      throw refused(invalidCode());
    }
    const typed = Buffer.from(this.#mac(purpose, subject, code));
    const stored = Buffer.from(row.secretHash);
    if (typed.length !== stored.length || !timingSafeEqual(typed, stored)) throw refused(invalidCode());
    return { id: row.id, userId: row.userId };
  }

  /** Gives back the try a matched code took (check-verification-otp checks without using). */
  async giveBack(matched: MatchedCode): Promise<void> {
    await this.#db.authChallenge.updateMany({ where: { id: matched.id, attempts: { gt: 0 } }, data: { attempts: { decrement: 1 } } });
  }

  /** In `tx`: spends a matched code or found link; false when another request spent it first. */
  async spend(tx: Prisma.TransactionClient, row: { id: string }): Promise<boolean> {
    const { count } = await tx.authChallenge.deleteMany({ where: { id: row.id } });
    return count === 1;
  }

  /**
   * In `tx`: stores a magic link for `email` (its name for a new account sealed with it), valid
   * {@link PASSWORDLESS_TTL_MS}. Other links of the address stay valid until they expire or are
   * used; expired ones of the address are deleted here.
   */
  async putLink(tx: Prisma.TransactionClient, token: string, email: string, name: string | undefined): Promise<void> {
    const subject = this.subject(email);
    const now = this.#now();
    const id = randomUUID();
    await tx.authChallenge.deleteMany({ where: { purpose: MAGIC_LINK, subject, expiresAt: { lte: new Date(now) } } });
    await tx.authChallenge.create({
      data: {
        id,
        purpose: MAGIC_LINK,
        subject,
        secretHash: this.#mac(MAGIC_LINK, token),
        data: { sealed: this.#box.seal(JSON.stringify({ email, ...(name ? { name } : {}) }), context(id)) },
        expiresAt: new Date(now + PASSWORDLESS_TTL_MS),
        createdAt: new Date(now),
      },
    });
  }

  /** The valid (unused, unexpired) link of `token`, without using it. */
  async findLink(token: string): Promise<MagicLinkGrant | undefined> {
    const row = await this.#db.authChallenge.findFirst({ where: { secretHash: this.#mac(MAGIC_LINK, token), purpose: MAGIC_LINK } });
    if (!row || row.expiresAt.getTime() <= this.#now()) return undefined;
    const sealed = (row.data as { sealed?: unknown } | null)?.sealed;
    const opened = typeof sealed === "string" ? this.#box.open(sealed, context(row.id)) : undefined;
    if (opened === undefined) return undefined;
    const grant = JSON.parse(opened) as { email: string; name?: string };
    return { id: row.id, email: grant.email, name: grant.name };
  }
}

/** Additional data of a row's seal: a payload moved to another row does not open. */
const context = (id: string) => `auth_challenge:${id}`;
