import { randomUUID } from "node:crypto";
import type { SignInBody, SignUpBody } from "@app/contracts";
import { isUniqueViolation, type PrismaClient, type User } from "@app/db";
import { AppError } from "@app/http-kit";
import { NO_REQUEST, type RequestFacts } from "../security-events/record.js";
import { refusedFor } from "../sign-in/failures.js";
import { userCreated } from "./account-events.js";
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
  async signUp(input: SignUpBody, facts: RequestFacts = NO_REQUEST): Promise<User> {
    const result = await this.signUpOrFind(input, facts);
    if (!result.created) throw new AppError("email_taken", "an account with this email already exists");
    return result.user;
  }

  /**
   * Creates the account, or finds the one that holds the address. Both paths hash the submitted
   * password first and try the insert, so they do the same work; the caller decides what a taken
   * address answers (services/verified-sign-up.ts answers it like a new one). A new account is
   * written with its `sign_up` event and `user.created` webhook in one transaction.
   */
  async signUpOrFind(input: SignUpBody, facts: RequestFacts = NO_REQUEST): Promise<SignUpOutcome> {
    const passwordHash = await hashPassword(input.password);
    try {
      const user = await this.#db.$transaction(async (tx) => {
        const created = await tx.user.create({
          data: {
            id: randomUUID(),
            email: input.email,
            name: input.name,
            ...(input.image !== undefined ? { image: input.image } : {}),
            accounts: { create: { id: randomUUID(), providerId: CREDENTIAL, accountId: input.email, passwordHash } },
          },
        });
        await userCreated(tx, created, "password", facts);
        return created;
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

  /**
   * Checks credentials; `invalid_credentials` (401) for an unknown email or a wrong password alike.
   * A wrong password's error is marked with its account (sign-in/failures.ts) for the failure
   * event; an unknown address's names nobody.
   */
  async signIn(input: SignInBody): Promise<User> {
    const user = await this.#db.user.findUnique({
      where: { email: input.email },
      include: { accounts: { where: { providerId: CREDENTIAL }, take: 1 } },
    });
    const ok = await verifyPassword(user?.accounts[0]?.passwordHash, input.password);
    if (!user || !ok) throw refusedFor(new AppError("invalid_credentials", "invalid email or password"), user?.id);
    const { accounts: _omit, ...plain } = user;
    return plain;
  }
}
