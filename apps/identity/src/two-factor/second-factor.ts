import type { TwoFactorMethod } from "@app/contracts";
import type { User } from "@app/db";
import type { Request, Response } from "express";
import type { FinishOptions, SecondFactorStep } from "../sign-in/finish.js";
import type { EmailCodes } from "./email-codes.js";
import { type TwoFactorRows, totpConfirmed } from "./factors.js";
import type { PendingSignIns } from "./pending.js";
import type { TrustedDevices } from "./trusted-devices.js";

/**
 * The second-factor step of sign-in/finish.ts: a trusted device of the user skips it (and is
 * renewed); otherwise a pending sign-in is stored with its cookie, and the sign-in answers the
 * factors it can finish with: `totp` once the authenticator app is confirmed, `otp` when mail is
 * configured (as better-auth lists them).
 */
export class SecondFactorSignIns implements SecondFactorStep {
  readonly #pending: PendingSignIns;
  readonly #trusted: TrustedDevices;
  readonly #rows: TwoFactorRows;
  readonly #emailCodes: EmailCodes;

  constructor(deps: { pending: PendingSignIns; trusted: TrustedDevices; rows: TwoFactorRows; emailCodes: EmailCodes }) {
    this.#pending = deps.pending;
    this.#trusted = deps.trusted;
    this.#rows = deps.rows;
    this.#emailCodes = deps.emailCodes;
  }

  async begin(req: Request, res: Response, user: User, options: FinishOptions): Promise<"trusted" | { methods: TwoFactorMethod[] }> {
    if (await this.#trusted.renew(req, res, user.id)) return "trusted";
    await this.#pending.open(res, user, { method: options.method, rememberMe: options.rememberMe !== false });
    return { methods: await this.methodsOf(user.id) };
  }

  /** The factors a pending sign-in of `userId` can finish with. */
  async methodsOf(userId: string): Promise<TwoFactorMethod[]> {
    const row = await this.#rows.find(userId);
    return [...(row && totpConfirmed(row) ? (["totp"] as const) : []), ...(this.#emailCodes.available ? (["otp"] as const) : [])];
  }
}
