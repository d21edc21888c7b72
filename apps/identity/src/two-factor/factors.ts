import { randomInt } from "node:crypto";
import type { Prisma, PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";
import type { TwoFactorSecrets } from "./secrets.js";
import { newTotpSecret } from "./totp.js";

/** A `two_factor` row. */
export type TwoFactorRow = Prisma.TwoFactorModel;

/** Backup codes per set and their shape, as better-auth's: ten codes of ten letters and digits, `xxxxx-xxxxx`. */
const BACKUP_CODE_COUNT = 10;
const BACKUP_CODE_LENGTH = 10;
const ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** A new set of backup codes (shown once; only their MACs are stored). */
export function newBackupCodes(): string[] {
  return Array.from({ length: BACKUP_CODE_COUNT }, () => {
    const code = Array.from({ length: BACKUP_CODE_LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join("");
    return `${code.slice(0, 5)}-${code.slice(5)}`;
  });
}

/** True once the TOTP factor's first code verified (a row is written unconfirmed by enable). */
export function totpConfirmed(row: Pick<TwoFactorRow, "lastStep">): boolean {
  return row.lastStep !== null;
}

/**
 * The TOTP factor and backup codes of users (`two_factor`): the secret sealed with
 * packages/secret-box, the unused backup codes as HMACs, and the last accepted time step, so a
 * code is accepted once. Every write that uses something up is one conditional statement, so
 * two concurrent requests never both use one code.
 */
export class TwoFactorRows {
  readonly #db: PrismaClient;
  readonly #secrets: TwoFactorSecrets;

  constructor(deps: { prisma: PrismaClient; secrets: TwoFactorSecrets }) {
    this.#db = deps.prisma;
    this.#secrets = deps.secrets;
  }

  find(userId: string): Promise<TwoFactorRow | null> {
    return this.#db.twoFactor.findUnique({ where: { userId } });
  }

  /** Writes a new, unconfirmed TOTP factor with new backup codes (replacing an unconfirmed one). */
  async begin(userId: string): Promise<{ secret: string; backupCodes: string[] }> {
    const secret = newTotpSecret();
    const backupCodes = newBackupCodes();
    const data = { secret: this.#secrets.sealTotp(userId, secret), backupCodes: this.#hashes(backupCodes), lastStep: null };
    await this.#db.twoFactor.upsert({ where: { userId }, create: { userId, ...data }, update: data });
    return { secret, backupCodes };
  }

  /** The TOTP secret of a row (500 when this AUTH_SECRET cannot open it: the row needs enable again). */
  secretOf(row: TwoFactorRow): string {
    const secret = this.#secrets.openTotp(row.userId, row.secret);
    if (secret === undefined) throw new AppError("internal_error", "the TOTP secret cannot be opened: turn two-factor off and on again");
    return secret;
  }

  /** Records `step` as the last accepted one; false when it is not after the last (a replay or a race lost). */
  async acceptStep(userId: string, step: number): Promise<boolean> {
    const count = await this.#db.$executeRaw`
      UPDATE "two_factor" SET "last_step" = ${BigInt(step)}, "updated_at" = now()
      WHERE "user_id" = ${userId} AND ("last_step" IS NULL OR "last_step" < ${BigInt(step)})`;
    return count === 1;
  }

  /** Uses up one backup code; false when it is not one of the user's unused codes. */
  async useBackupCode(userId: string, code: string): Promise<boolean> {
    const hash = this.#secrets.macText("backup-code", code);
    const count = await this.#db.$executeRaw`
      UPDATE "two_factor" SET "backup_codes" = array_remove("backup_codes", ${hash}), "updated_at" = now()
      WHERE "user_id" = ${userId} AND ${hash} = ANY("backup_codes")`;
    return count === 1;
  }

  /** Replaces the user's backup codes with a new set: the old ones stop working. */
  async replaceBackupCodes(userId: string, tx: Prisma.TransactionClient = this.#db): Promise<string[]> {
    const backupCodes = newBackupCodes();
    await tx.twoFactor.update({ where: { userId }, data: { backupCodes: this.#hashes(backupCodes) } });
    return backupCodes;
  }

  remove(userId: string, tx: Prisma.TransactionClient = this.#db): Promise<{ count: number }> {
    return tx.twoFactor.deleteMany({ where: { userId } });
  }

  #hashes(codes: string[]): string[] {
    return codes.map((code) => this.#secrets.macText("backup-code", code));
  }
}
