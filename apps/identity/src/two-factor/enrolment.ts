import type { EnableTwoFactorBody, EnableTwoFactorResponse } from "@app/contracts";
import type { PrismaClient, User } from "@app/db";
import { AppError } from "@app/http-kit";
import { NO_REQUEST, type RequestFacts, recordEvent } from "../security-events/record.js";
import type { EmailCodes } from "./email-codes.js";
import { type TwoFactorRows, totpConfirmed } from "./factors.js";
import type { AccountChecks } from "./notices.js";
import type { PendingSignIns } from "./pending.js";
import { totpUri } from "./totp.js";
import type { TrustedDevices } from "./trusted-devices.js";

const notEnabled = (message: string) => new AppError("two_factor_not_enabled", message);

/**
 * A signed-in user's second factors, each change confirmed with the account password (better-auth's
 * `twoFactor` plugin without `allowPasswordless`): enable, the TOTP URI again, new backup codes,
 * disable. Two-factor goes on only once a first code verifies (verification.ts), so an
 * authenticator app that was never set up cannot lock anyone out.
 */
export class TwoFactorEnrolment {
  readonly #db: PrismaClient;
  readonly #rows: TwoFactorRows;
  readonly #checks: AccountChecks;
  readonly #pending: PendingSignIns;
  readonly #trusted: TrustedDevices;
  readonly #emailCodes: EmailCodes;
  readonly #issuer: string;

  constructor(deps: {
    prisma: PrismaClient;
    rows: TwoFactorRows;
    checks: AccountChecks;
    pending: PendingSignIns;
    trusted: TrustedDevices;
    emailCodes: EmailCodes;
    /** The issuer authenticator apps show unless enable names one. */
    issuer: string;
  }) {
    this.#db = deps.prisma;
    this.#rows = deps.rows;
    this.#checks = deps.checks;
    this.#pending = deps.pending;
    this.#trusted = deps.trusted;
    this.#emailCodes = deps.emailCodes;
    this.#issuer = deps.issuer;
  }

  /**
   * `totp` (default): a new secret and backup codes, replacing an unconfirmed setup; 400 when an
   * authenticator app is already confirmed. `otp`: emailed codes, on at once (with its notice).
   */
  async enable(user: User, body: EnableTwoFactorBody, facts: RequestFacts = NO_REQUEST): Promise<EnableTwoFactorResponse> {
    await this.#checks.checkPassword(user.id, body.password);
    if (body.method === "otp") {
      if (!this.#emailCodes.available) throw new AppError("mail_unavailable", "mail is not configured (set SMTP_URL)", { expose: true });
      await this.turnOn(user, "otp", facts);
      return { method: "otp" };
    }
    const existing = await this.#rows.find(user.id);
    if (existing && totpConfirmed(existing)) throw new AppError("bad_request", "TOTP is already enabled");
    const { secret, backupCodes } = await this.#rows.begin(user.id);
    return { method: "totp", totpURI: totpUri(secret, body.issuer ?? this.#issuer, user.email), backupCodes };
  }

  /**
   * Turns two-factor on for `user` if it is off, with its notice and its `two_factor_enabled`
   * event (`method`: the factor that confirmed it); the user as it is now.
   */
  async turnOn(user: User, method: "totp" | "otp", facts: RequestFacts = NO_REQUEST): Promise<User> {
    if (user.twoFactorEnabled) return user;
    const [updated, queued] = await this.#db.$transaction(async (tx) => {
      const { count } = await tx.user.updateMany({ where: { id: user.id, twoFactorEnabled: false }, data: { twoFactorEnabled: true } });
      const after = await tx.user.findUniqueOrThrow({ where: { id: user.id } });
      if (count === 1) await recordEvent(tx, { type: "two_factor_enabled", userId: user.id, method }, facts);
      return [after, count === 1 && (await this.#checks.notice(tx, "two-factor-enabled", after.email))] as const;
    });
    this.#checks.sent(queued);
    return updated;
  }

  /** The TOTP URI of the user's authenticator app (set up or confirmed). */
  async totpUri(user: User, password: string): Promise<string> {
    const row = await this.#rows.find(user.id);
    if (!row) throw notEnabled("TOTP not enabled");
    await this.#checks.checkPassword(user.id, password);
    return totpUri(this.#rows.secretOf(row), this.#issuer, user.email);
  }

  /** A new set of backup codes (the old ones stop working), with its notice. */
  async regenerateBackupCodes(user: User, password: string): Promise<string[]> {
    if (!user.twoFactorEnabled) throw notEnabled("two-factor authentication is not enabled");
    await this.#checks.checkPassword(user.id, password);
    if (!(await this.#rows.find(user.id))) throw notEnabled("two-factor authentication is not enabled");
    const [codes, queued] = await this.#db.$transaction(async (tx) => {
      const replaced = await this.#rows.replaceBackupCodes(user.id, tx);
      return [replaced, await this.#checks.notice(tx, "backup-codes-regenerated", user.email)] as const;
    });
    this.#checks.sent(queued);
    return codes;
  }

  /**
   * Turns two-factor off: the factor, its backup codes, every trusted device and pending sign-in
   * of the user end in one transaction with the notice and the `two_factor_disabled` event (when
   * two-factor was on).
   */
  async disable(user: User, password: string, facts: RequestFacts = NO_REQUEST): Promise<void> {
    await this.#checks.checkPassword(user.id, password);
    const queued = await this.#db.$transaction(async (tx) => {
      const { count: turnedOff } = await tx.user.updateMany({
        where: { id: user.id, twoFactorEnabled: true },
        data: { twoFactorEnabled: false },
      });
      await this.#rows.remove(user.id, tx);
      await this.#trusted.endAll(user.id, tx);
      await this.#pending.endAll(user.id, tx);
      if (turnedOff === 1) await recordEvent(tx, { type: "two_factor_disabled", userId: user.id }, facts);
      return turnedOff === 1 && (await this.#checks.notice(tx, "two-factor-disabled", user.email));
    });
    await this.#emailCodes.endAll(user.id);
    this.#checks.sent(queued);
  }
}
