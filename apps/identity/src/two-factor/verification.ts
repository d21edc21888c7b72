import type { TwoFactorVerifiedResponse, VerifyBackupCodeBody, VerifyTwoFactorCodeBody } from "@app/contracts";
import { AppError, isAppError } from "@app/http-kit";
import type { Request, Response } from "express";
import { requestFacts } from "../security-events/record.js";
import type { SecondFactorKind } from "../sign-in/failures.js";
import type { SignInFinisher } from "../sign-in/finish.js";
import { publicUser } from "../views/public.js";
import { type Caller, callerUser } from "./caller.js";
import type { EmailCodes } from "./email-codes.js";
import type { TwoFactorEnrolment } from "./enrolment.js";
import { type TwoFactorRows, totpConfirmed } from "./factors.js";
import type { PendingSignIn, PendingSignIns } from "./pending.js";
import { checkTotp } from "./totp.js";
import type { TrustedDevices } from "./trusted-devices.js";

const invalidCode = () => new AppError("invalid_code", "invalid code");

/**
 * The second factor itself, as better-auth's verify routes: from a pending sign-in a verified code
 * finishes the sign-in (the session cookie through sign-in/finish.ts, the device trusted on
 * request); from a session it confirms a factor (the first TOTP or emailed code turns two-factor
 * on) or checks a backup code. A pending sign-in allows five codes in all, each code of the user
 * counts toward the rate limits (middleware/rate-limits.ts), and every code works once.
 */
export class TwoFactorVerification {
  readonly #rows: TwoFactorRows;
  readonly #pending: PendingSignIns;
  readonly #trusted: TrustedDevices;
  readonly #emailCodes: EmailCodes;
  readonly #enrolment: TwoFactorEnrolment;
  readonly #signIns: SignInFinisher;
  readonly #now: () => number;

  constructor(deps: {
    rows: TwoFactorRows;
    pending: PendingSignIns;
    trusted: TrustedDevices;
    emailCodes: EmailCodes;
    enrolment: TwoFactorEnrolment;
    signIns: SignInFinisher;
    now: () => number;
  }) {
    this.#rows = deps.rows;
    this.#pending = deps.pending;
    this.#trusted = deps.trusted;
    this.#emailCodes = deps.emailCodes;
    this.#enrolment = deps.enrolment;
    this.#signIns = deps.signIns;
    this.#now = deps.now;
  }

  /** POST verify-totp: a code of the authenticator app, one time step either side, once. */
  verifyTotp(req: Request, res: Response, caller: Caller, body: VerifyTwoFactorCodeBody): Promise<TwoFactorVerifiedResponse> {
    return this.#recorded(req, caller, "totp", async () => {
      const user = callerUser(caller);
      const row = await this.#rows.find(user.id);
      if (!row || (caller.kind === "pending" && !totpConfirmed(row))) throw new AppError("two_factor_not_enabled", "TOTP not enabled");
      await this.#spend(res, caller);
      const epoch = Math.floor(this.#now() / 1000);
      const step = await checkTotp(this.#rows.secretOf(row), body.code, epoch, row.lastStep === null ? undefined : Number(row.lastStep));
      if (step === undefined || !(await this.#rows.acceptStep(user.id, step))) throw invalidCode();
      if (caller.kind === "pending") return this.#finish(req, res, caller.pending, body.trustDevice === true, "totp");
      return { token: caller.active.session.id, user: publicUser(await this.#enrolment.turnOn(user, "totp", requestFacts(req))) };
    });
  }

  /** POST verify-backup-code: one of the user's unused backup codes, used up. */
  verifyBackupCode(req: Request, res: Response, caller: Caller, body: VerifyBackupCodeBody): Promise<TwoFactorVerifiedResponse> {
    return this.#recorded(req, caller, "backup-code", async () => {
      const user = callerUser(caller);
      if (!(await this.#rows.find(user.id))) throw new AppError("two_factor_not_enabled", "backup codes are not enabled");
      await this.#spend(res, caller);
      if (!(await this.#rows.useBackupCode(user.id, body.code))) throw invalidCode();
      if (caller.kind === "session") return { token: caller.active.session.id, user: publicUser(user) };
      if (body.disableSession === true) return { token: null, user: publicUser(user) };
      return this.#finish(req, res, caller.pending, body.trustDevice === true, "backup-code");
    });
  }

  /** POST send-otp: a new emailed code for this pending sign-in or session. */
  sendOtp(caller: Caller): Promise<void> {
    return this.#emailCodes.send(subjectOf(caller), callerUser(caller));
  }

  /** POST verify-otp: the emailed code; from a session it turns two-factor on (as better-auth). */
  verifyOtp(req: Request, res: Response, caller: Caller, body: VerifyTwoFactorCodeBody): Promise<TwoFactorVerifiedResponse> {
    return this.#recorded(req, caller, "otp", async () => {
      await this.#spend(res, caller);
      await this.#emailCodes.verify(subjectOf(caller), body.code);
      if (caller.kind === "pending") return this.#finish(req, res, caller.pending, body.trustDevice === true, "otp");
      return {
        token: caller.active.session.id,
        user: publicUser(await this.#enrolment.turnOn(caller.active.user, "otp", requestFacts(req))),
      };
    });
  }

  /**
   * Runs a second-factor check; for a pending sign-in a refused code (wrong, expired, out of
   * tries) is recorded as `sign_in_failed` of the sign-in's first method with its factor. The
   * finisher records a ban itself, and a code checked from a session is no sign-in.
   */
  async #recorded<T>(req: Request, caller: Caller, factor: SecondFactorKind, check: () => Promise<T>): Promise<T> {
    if (caller.kind !== "pending") return check();
    try {
      return await check();
    } catch (error) {
      if (!isAppError(error) || error.code !== "banned") {
        await this.#signIns.failed(req, error, {
          method: caller.pending.data.method,
          userId: caller.pending.user.id,
          secondFactor: factor,
        });
      }
      throw error;
    }
  }

  /** Spends one of a pending sign-in's tries; with none left it ends (403 `too_many_attempts`). */
  async #spend(res: Response, caller: Caller): Promise<void> {
    if (caller.kind !== "pending" || (await this.#pending.spendAttempt(caller.pending))) return;
    await this.#pending.close(res, caller.pending);
    throw new AppError("too_many_attempts", "too many wrong codes: sign in again");
  }

  /** Ends the pending sign-in with a session (its cookie set) and, on request, trusts the device. */
  async #finish(
    req: Request,
    res: Response,
    pending: PendingSignIn,
    trustDevice: boolean,
    secondFactor: SecondFactorKind,
  ): Promise<TwoFactorVerifiedResponse> {
    if (!(await this.#pending.close(res, pending))) {
      throw new AppError("invalid_two_factor_cookie", "the pending two-factor sign-in is used or expired: sign in again");
    }
    const finished = await this.#signIns.finish(req, res, pending.user, { ...pending.data, twoFactors: true, secondFactor });
    if (finished.kind !== "session") throw new AppError("internal_error", "a verified second factor did not open a session");
    if (trustDevice) await this.#trusted.trust(res, pending.user.id);
    return { token: finished.session.id, user: publicUser(finished.user) };
  }
}

/** Whose emailed code it is: one per pending sign-in, one per session. */
function subjectOf(caller: Caller): string {
  return caller.kind === "session" ? `session:${caller.active.session.id}` : `pending:${caller.pending.id}`;
}
