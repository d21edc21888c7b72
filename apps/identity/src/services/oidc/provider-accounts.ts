import { randomUUID } from "node:crypto";
import { isUniqueViolation, type PrismaClient, type User } from "@app/db";
import { NO_REQUEST, type RequestFacts } from "../../security-events/record.js";
import { userCreated } from "../account-events.js";
import type { FlowLink } from "./flow-state.js";
import type { ProviderProfile } from "./provider-client.js";

/** A provider's answer with its address normalised (emailSchema) and what the provider vouches for. */
export interface ClaimedIdentity {
  providerId: string;
  profile: ProviderProfile;
  /** The address as emailSchema normalises it: what identity stores and looks up. */
  email: string;
  /**
   * True when the provider asserts `email_verified` for this very address: its spelling may
   * differ from `email` only in case, composition (NFC) and the domain's form (IDNA, a trailing
   * dot). A local part that NFKC folds (full-width `ａｎｎ`) is another mailbox at the provider.
   */
  verified: boolean;
}

/** Why a provider identity was not signed in or linked: the callback's `error` code. */
export type Refusal =
  | "email_not_verified"
  | "account_not_linked"
  | "account_conflict"
  | "email_mismatch"
  | "account_already_linked"
  | "session_expired";

/**
 * True when `raw`, the provider's spelling, names the mailbox `normalised` names: the local parts
 * agree once both are NFC and lower case. The domain may differ in form only (WHATWG host parsing
 * maps full-width and Unicode domains to the one DNS name emailSchema stores).
 */
export function sameMailbox(raw: string, normalised: string): boolean {
  const local = (address: string) => address.slice(0, address.lastIndexOf("@")).normalize("NFC").toLowerCase();
  return local(raw.trim()) === local(normalised);
}

/**
 * The users behind provider identities (docs/sign-in-providers.md "Accounts"): who a provider
 * sign-in opens, and which signed-in user a link-social flow adds an identity to. An address
 * counts only when the provider vouches for it ({@link ClaimedIdentity.verified}), and an existing
 * user is reached only when its own address was proved through its mailbox.
 */
export class ProviderAccounts {
  readonly #db: PrismaClient;
  readonly #requireEmailVerification: boolean;

  constructor(deps: { prisma: PrismaClient; requireEmailVerification: boolean }) {
    this.#db = deps.prisma;
    this.#requireEmailVerification = deps.requireEmailVerification;
  }

  /**
   * The user a provider sign-in opens: the one the identity is linked to; else, when the provider
   * vouches for the address, the user of that address if its address is verified (linked now),
   * or a new, verified user. Refused: an address the provider does not vouch for
   * (`email_not_verified`, before anything is looked up or written, so nobody claims an address
   * they never proved) and a user whose address nobody proved (`account_not_linked`: whoever
   * registered it first may not be its owner, and linking would hand them the owner's sign-ins).
   * A new user is written with its `sign_up` event and `user.created` webhook.
   */
  async signIn(claim: ClaimedIdentity, facts: RequestFacts = NO_REQUEST): Promise<{ user: User; created: boolean } | { refused: Refusal }> {
    const { providerId, profile } = claim;
    const linked = await this.#db.account.findUnique({
      where: { providerId_accountId: { providerId, accountId: profile.accountId } },
      include: { user: true },
    });
    if (linked) {
      const blocked = this.#requireEmailVerification && !linked.user.emailVerified && !claim.verified;
      return blocked ? { refused: "email_not_verified" } : { user: linked.user, created: false };
    }
    if (!claim.verified) return { refused: "email_not_verified" };
    try {
      return await this.#db.$transaction(async (tx) => {
        const existing = await tx.user.findUnique({ where: { email: claim.email } });
        if (existing) {
          if (!existing.emailVerified) return { refused: "account_not_linked" as const };
          await tx.account.create({ data: { id: randomUUID(), userId: existing.id, providerId, accountId: profile.accountId } });
          return { user: existing, created: false };
        }
        const user = await tx.user.create({
          data: {
            id: randomUUID(),
            email: claim.email,
            name: (profile.name ?? claim.email.split("@")[0] ?? "").slice(0, 255),
            emailVerified: true,
            ...(profile.image && profile.image.length <= 2048 ? { image: profile.image } : {}),
            accounts: { create: { id: randomUUID(), providerId, accountId: profile.accountId } },
          },
        });
        await userCreated(tx, user, "provider", facts);
        return { user, created: true };
      });
    } catch (error) {
      // A concurrent callback created the same user or link: the next attempt finds it.
      if (isUniqueViolation(error)) return { refused: "account_conflict" };
      throw error;
    }
  }

  /**
   * Links a provider identity to the signed-in user of a link-social flow, as better-auth's
   * link-social does: the session that asked must still be live (`session_expired`), the user's
   * address verified and the provider vouching for that same address (`email_not_verified`,
   * `email_mismatch`), and the identity not another user's (`account_already_linked`). Linking an
   * identity the user already has changes nothing.
   */
  async link(link: FlowLink, claim: ClaimedIdentity): Promise<{ linked: true } | { refused: Refusal }> {
    const now = new Date();
    const session = await this.#db.session.findFirst({
      where: { id: link.sessionId, userId: link.userId, expiresAt: { gt: now } },
      include: { user: true },
    });
    if (!session) return { refused: "session_expired" };
    const { providerId, profile } = claim;
    const existing = await this.#db.account.findUnique({ where: { providerId_accountId: { providerId, accountId: profile.accountId } } });
    if (existing) return existing.userId === link.userId ? { linked: true } : { refused: "account_already_linked" };
    if (!session.user.emailVerified || !claim.verified) return { refused: "email_not_verified" };
    if (claim.email !== session.user.email) return { refused: "email_mismatch" };
    try {
      await this.#db.account.create({ data: { id: randomUUID(), userId: link.userId, providerId, accountId: profile.accountId } });
      return { linked: true };
    } catch (error) {
      if (isUniqueViolation(error)) return { refused: "account_already_linked" };
      throw error;
    }
  }
}
