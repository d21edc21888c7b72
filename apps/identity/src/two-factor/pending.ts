import type { Prisma, PrismaClient, User } from "@app/db";
import type { Request, Response } from "express";
import type { SignInMethod } from "../sign-in/finish.js";
import { PENDING_TTL_MS, type TwoFactorCookies } from "./cookies.js";
import { randomId, randomSecret, SECRET_SHAPE, type TwoFactorSecrets } from "./secrets.js";

/** `AuthChallenge.purpose` of a pending second-factor sign-in. */
export const PENDING_PURPOSE = "two-factor";
/** Codes one pending sign-in may try (better-auth's five), whichever factor they are for. */
export const PENDING_MAX_ATTEMPTS = 5;

/** How the sign-in a second factor finishes began. */
export interface PendingData {
  method: SignInMethod;
  rememberMe: boolean;
}

/** A pending sign-in, as the request's cookie names it. */
export interface PendingSignIn {
  id: string;
  user: User;
  data: PendingData;
}

/**
 * Pending second-factor sign-ins (`auth_challenge`, purpose `two-factor`): a user who proved one
 * factor while two-factor is on. The browser holds a random secret in the HttpOnly
 * `<prefix>.two_factor` cookie for 10 minutes; the row holds only its HMAC. A pending sign-in is
 * no session: get-session answers null and no JWT is issued until a second factor verifies.
 */
export class PendingSignIns {
  readonly #db: PrismaClient;
  readonly #secrets: TwoFactorSecrets;
  readonly #cookies: TwoFactorCookies;
  readonly #now: () => number;

  constructor(deps: { prisma: PrismaClient; secrets: TwoFactorSecrets; cookies: TwoFactorCookies; now: () => number }) {
    this.#db = deps.prisma;
    this.#secrets = deps.secrets;
    this.#cookies = deps.cookies;
    this.#now = deps.now;
  }

  /** Stores a pending sign-in of `user` and sets its cookie; the user's expired ones go. */
  async open(res: Response, user: User, data: PendingData): Promise<void> {
    const secret = randomSecret();
    const now = this.#now();
    await this.#db.$transaction([
      this.#db.authChallenge.deleteMany({ where: { purpose: PENDING_PURPOSE, subject: user.id, expiresAt: { lte: new Date(now) } } }),
      this.#db.authChallenge.create({
        data: {
          id: randomId(),
          purpose: PENDING_PURPOSE,
          subject: user.id,
          secretHash: this.#secrets.mac("pending", secret),
          userId: user.id,
          data: { ...data } satisfies Prisma.InputJsonObject,
          expiresAt: new Date(now + PENDING_TTL_MS),
          createdAt: new Date(now),
        },
      }),
    ]);
    this.#cookies.set(res, this.#cookies.pending, secret, PENDING_TTL_MS);
  }

  /** The live pending sign-in the request's cookie names, with its user; undefined when none. */
  async read(req: Request, res: Response): Promise<PendingSignIn | undefined> {
    const secret = this.#cookies.read(req, res, this.#cookies.pending);
    if (secret === undefined || !SECRET_SHAPE.test(secret)) return undefined;
    const row = await this.#db.authChallenge.findFirst({
      where: { secretHash: this.#secrets.mac("pending", secret), purpose: PENDING_PURPOSE },
      include: { user: true },
    });
    if (!row?.user || row.expiresAt.getTime() <= this.#now()) return undefined;
    const data = row.data as Partial<PendingData> | null;
    return {
      id: row.id,
      user: row.user,
      data: { method: data?.method ?? "password", rememberMe: data?.rememberMe !== false },
    };
  }

  /**
   * Spends one of the pending sign-in's tries before a code is checked (concurrent tries each
   * spend one); false when none is left.
   */
  async spendAttempt(pending: PendingSignIn): Promise<boolean> {
    const { count } = await this.#db.authChallenge.updateMany({
      where: { id: pending.id, purpose: PENDING_PURPOSE, attempts: { lt: PENDING_MAX_ATTEMPTS } },
      data: { attempts: { increment: 1 } },
    });
    return count === 1;
  }

  /** Ends the pending sign-in and clears its cookie; true for the one request whose delete removed it. */
  async close(res: Response, pending: PendingSignIn): Promise<boolean> {
    this.#cookies.clear(res, this.#cookies.pending);
    const { count } = await this.#db.authChallenge.deleteMany({ where: { id: pending.id, purpose: PENDING_PURPOSE } });
    return count === 1;
  }

  /** Every pending sign-in of a user (two-factor turned off). */
  endAll(userId: string, tx: Prisma.TransactionClient = this.#db): Promise<{ count: number }> {
    return tx.authChallenge.deleteMany({ where: { purpose: PENDING_PURPOSE, subject: userId } });
  }
}
