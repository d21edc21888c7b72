import type { Prisma, PrismaClient } from "@app/db";
import type { Request, Response } from "express";
import { TRUST_TTL_MS, type TwoFactorCookies } from "./cookies.js";
import { ID_SECRET_SHAPE, randomId, randomSecret, type TwoFactorSecrets } from "./secrets.js";

/**
 * Browsers that skip the second factor for 30 days after one verified with `trustDevice`
 * (`trusted_device`): the `<prefix>.trust_device` cookie carries `<id>.<secret>`, the row only
 * HMAC(secret). Each sign-in it skips renews it (a new id and secret, 30 more days), as better-auth
 * does; turning two-factor off ends every trusted device of the user.
 */
export class TrustedDevices {
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

  /** Trusts this browser for `userId` (a new row and cookie); the user's expired rows go. */
  async trust(res: Response, userId: string): Promise<void> {
    const id = randomId();
    const secret = randomSecret();
    const now = this.#now();
    await this.#db.$transaction([
      this.#db.trustedDevice.deleteMany({ where: { userId, expiresAt: { lte: new Date(now) } } }),
      this.#db.trustedDevice.create({
        data: {
          id,
          userId,
          secretHash: this.#secrets.mac("trusted-device", secret),
          expiresAt: new Date(now + TRUST_TTL_MS),
          createdAt: new Date(now),
        },
      }),
    ]);
    this.#cookies.set(res, this.#cookies.trust, `${id}.${secret}`, TRUST_TTL_MS);
  }

  /**
   * True when the request's trust cookie is a live trusted device of `userId`: it is used up and
   * a new one set. A cookie that is not (another user's, expired, forged) is cleared.
   */
  async renew(req: Request, res: Response, userId: string): Promise<boolean> {
    const value = this.#cookies.read(req, res, this.#cookies.trust);
    if (value === undefined) return false;
    const [id = "", secret = ""] = value.split(".");
    const row = ID_SECRET_SHAPE.test(value) ? await this.#db.trustedDevice.findUnique({ where: { id } }) : null;
    const live =
      row !== null &&
      row.userId === userId &&
      row.expiresAt.getTime() > this.#now() &&
      this.#secrets.matches(row.secretHash, "trusted-device", secret);
    // The delete that removes the row wins it: two sign-ins racing with one cookie renew it once.
    if (live && (await this.#db.trustedDevice.deleteMany({ where: { id, userId } })).count === 1) {
      await this.trust(res, userId);
      return true;
    }
    this.#cookies.clear(res, this.#cookies.trust);
    return false;
  }

  /** Clears this browser's trust cookie (its row goes with {@link endAll}). */
  forget(res: Response): void {
    this.#cookies.clear(res, this.#cookies.trust);
  }

  /** Every trusted device of a user. */
  endAll(userId: string, tx: Prisma.TransactionClient = this.#db): Promise<{ count: number }> {
    return tx.trustedDevice.deleteMany({ where: { userId } });
  }
}
