import { AUTH_BASE_PATH, type SignInMagicLinkBody } from "@app/contracts";
import type { PrismaClient, User } from "@app/db";
import { AppError } from "@app/http-kit";
import type { RequestFacts } from "../security-events/record.js";
import type { MailOutbox } from "../services/mail-outbox.js";
import { MAGIC_LINK, type MagicLinkGrant, type MailChallenges } from "./challenges.js";
import type { MailboxProof } from "./mailbox-proof.js";

/** The callbacks of a link, each checked (callback-url.ts) and absolute, or absent. */
export interface LinkCallbacks {
  callbackURL?: string | undefined;
  newUserCallbackURL?: string | undefined;
  errorCallbackURL?: string | undefined;
}

const invalidLink = () => new AppError("invalid_token", "the link is invalid, used or expired");

/**
 * Magic links (better-auth's `magicLink` plugin): every valid address gets one, since using it
 * creates the account when there is none, so asking tells nothing about the address. A link works
 * once, for five minutes; its use signs in, and proves the mailbox (mailbox-proof.ts).
 */
export class MagicLinks {
  readonly #db: PrismaClient;
  readonly #challenges: MailChallenges;
  readonly #proof: MailboxProof;
  readonly #outbox: MailOutbox;
  readonly #verifyUrl: string;

  constructor(deps: { prisma: PrismaClient; challenges: MailChallenges; proof: MailboxProof; outbox: MailOutbox; baseUrl: string }) {
    this.#db = deps.prisma;
    this.#challenges = deps.challenges;
    this.#proof = deps.proof;
    this.#outbox = deps.outbox;
    this.#verifyUrl = `${deps.baseUrl.replace(/\/+$/, "")}${AUTH_BASE_PATH}/magic-link/verify`;
  }

  /**
   * POST sign-in/magic-link: the link's row and its mail's outbox row in one transaction, the same
   * statements for every address (nothing is read about the address first). Without SMTP_URL,
   * 503 `mail_unavailable` for every address alike.
   */
  async send(body: Pick<SignInMagicLinkBody, "email" | "name">, callbacks: LinkCallbacks): Promise<void> {
    if (!this.#outbox.enabled) throw new AppError("mail_unavailable", "mail is not configured (set SMTP_URL)", { expose: true });
    const token = this.#challenges.newToken();
    const link = new URL(this.#verifyUrl);
    link.searchParams.set("token", token);
    for (const [name, value] of Object.entries(callbacks)) if (value) link.searchParams.set(name, value);
    const outcome = await this.#db.$transaction(async (tx) => {
      await this.#challenges.putLink(tx, token, body.email, body.name);
      return this.#outbox.enqueueMail({ kind: MAGIC_LINK, to: body.email, body: link.href }, tx);
    });
    if (outcome === "queued") this.#outbox.wake();
  }

  /** The valid link of `token`, unused (the one-click page is shown for it). */
  find(token: string): Promise<MagicLinkGrant | undefined> {
    return this.#challenges.findLink(token);
  }

  /**
   * Uses a link: one transaction spends it and signs its address in, creating the account
   * (verified) when there is none and proving the mailbox of one that exists. 400
   * `invalid_token` when another request used it first.
   */
  async use(grant: MagicLinkGrant, facts: RequestFacts): Promise<{ user: User; created: boolean }> {
    const audit = { method: MAGIC_LINK, facts };
    return this.#db.$transaction(async (tx) => {
      if (!(await this.#challenges.spend(tx, grant))) throw invalidLink();
      const { user, created } = await this.#proof.lockOrCreate(tx, grant.email, { name: grant.name }, audit);
      return { user: await this.#proof.prove(tx, user, audit), created };
    });
  }
}
