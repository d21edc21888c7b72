import { randomUUID } from "node:crypto";
import type { SignInBody, SignUpBody } from "@app/contracts";
import { isUniqueViolation, type PrismaClient, type User } from "@app/db";
import { AppError } from "@app/http-kit";
import { hashPassword, verifyPassword, warmUpPasswords } from "./passwords.js";

const CREDENTIAL = "credential";

/** What a sign-up did: created `user`, or found the existing `user` holding the address. */
export type SignUpOutcome = { created: true; user: User } | { created: false; user: User };

/**
 * Email-and-password accounts. The password hash lives on an account row (provider
 * "credential"), never on the user. Unknown email and wrong password fail identically.
 */
export class Accounts {
  readonly #db: PrismaClient;

  constructor(deps: { prisma: PrismaClient }) {
    this.#db = deps.prisma;
    void warmUpPasswords();
  }

  /** Creates a user with a credential account; `email_taken` (409) when the email is in use. */
  async signUp(input: SignUpBody): Promise<User> {
    const result = await this.signUpOrFind(input);
    if (!result.created) throw new AppError("email_taken", "an account with this email already exists");
    return result.user;
  }

  /**
   * Creates the account, or finds the one that holds the address. Both paths hash the submitted
   * password first and try the insert, so they do the same work; the caller decides what a taken
   * address answers (services/verified-sign-up.ts answers it like a new one).
   */
  async signUpOrFind(input: SignUpBody): Promise<SignUpOutcome> {
    const passwordHash = await hashPassword(input.password);
    try {
      const user = await this.#db.user.create({
        data: {
          id: randomUUID(),
          email: input.email,
          name: input.name,
          ...(input.image !== undefined ? { image: input.image } : {}),
          accounts: { create: { id: randomUUID(), providerId: CREDENTIAL, accountId: input.email, passwordHash } },
        },
      });
      return { created: true, user };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const existing = await this.#db.user.findUnique({ where: { email: input.email } });
      // Deleted between the insert and this read: the address is free again, but this attempt lost.
      if (!existing) throw new AppError("email_taken", "an account with this email already exists");
      return { created: false, user: existing };
    }
  }

  /** Checks credentials; `invalid_credentials` (401) for an unknown email or a wrong password alike. */
  async signIn(input: SignInBody): Promise<User> {
    const user = await this.#db.user.findUnique({
      where: { email: input.email },
      include: { accounts: { where: { providerId: CREDENTIAL }, take: 1 } },
    });
    const ok = await verifyPassword(user?.accounts[0]?.passwordHash, input.password);
    if (!user || !ok) throw new AppError("invalid_credentials", "invalid email or password");
    const { accounts: _omit, ...plain } = user;
    return plain;
  }
}
