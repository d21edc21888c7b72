import { createHmac, hkdfSync, randomBytes, randomUUID } from "node:crypto";
import { emailSchema } from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import { SecretBox } from "@app/secret-box";
import type { Logger } from "pino";
import type { MailKind } from "./account-mail.js";
import { MAIL_COOLDOWN_MS, type MailTokens, type TokenPurpose } from "./mail-tokens.js";

/** The window of the per-address budget. */
export const MAIL_BUDGET_WINDOW_MS = 60 * 60 * 1000;
/** Mails one address may receive per {@link MAIL_BUDGET_WINDOW_MS} unless MAIL_BUDGET_PER_HOUR says otherwise. */
export const DEFAULT_MAIL_BUDGET = 5;

/** Salt as in mail-tokens.ts and packages/secret-box, with infos of its own: independent keys. */
const KDF_SALT = "token-auth-service";
const RECIPIENT_INFO = "mail-outbox-recipient";
const SEAL_PURPOSE = "mail-outbox";
/** First argument of the per-address advisory lock (two-key form), apart from other locks. */
const LOCK_CLASS = 0x6d61696c;
/** Rows that are, or were, a mail to the address: what the budget counts. */
const COUNTED = ["pending", "sending", "sent", "dead"];

/** A mail whose link carries a fresh token of `purpose` (the reset, verification and change links). */
export interface TokenMail {
  kind: MailKind;
  purpose: TokenPurpose;
  /** The account the token is for; undefined when the address gets no mail (no account, already verified, taken). */
  userId: string | undefined;
  to: string;
  /** The address the token stands for when it is not `to` (an email change confirmed from the current address names the new one). */
  tokenEmail?: string;
  link: (token: string) => string;
}

/**
 * A mail whose secret the caller made itself in the same transaction (a sign-in code, a magic
 * link) or a notice that carries none. `body` undefined writes a `skipped` row with the same
 * statements: an address that gets no mail answers in the same time.
 */
export interface PlainMail {
  kind: MailKind;
  to: string;
  /** The link or code the mail carries; undefined: nothing to send to this address. */
  body: string | undefined;
}

/** What became of a mail: queued to send, nothing to send, or over the address's budget. */
export type Enqueued = "queued" | "skipped" | "dropped";

/** A mail the worker claimed, opened. */
export interface ClaimedMail {
  id: string;
  kind: MailKind;
  to: string;
  link: string;
  /** This attempt's number (1 for the first). */
  attempts: number;
}

/** Mails per address per hour, and whether anything sends them (SMTP_URL is set). */
export interface MailOutboxSettings {
  enabled: boolean;
  budgetPerHour?: number;
}

/**
 * The durable outbox of account mails (table `mail_outbox`). A mail route writes one row in one
 * transaction with the mail's token, whatever the address: a sealed recipient and link for an
 * account that gets mail, a row with nothing to send for an address that gets none, with the
 * same statements in the same order, so the answer's time tells nothing (docs/accounts.md "No
 * enumeration"). The worker (mail-outbox-worker.ts) claims due rows with SKIP LOCKED, so two
 * identity instances never send one row twice, and scrubs each row once it is sent or given up.
 *
 * Every mail to an address spends its budget, whichever route caused it: rows are counted by an
 * HMAC of the normalised address under a lock on it; a mail beyond the budget is dropped (its
 * token never made) and logged with that HMAC, never the address.
 */
export class MailOutbox {
  readonly #db: PrismaClient;
  readonly #tokens: MailTokens;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #box: SecretBox;
  readonly #recipientKey: Buffer;
  readonly #budget: number;
  readonly #listeners = new Set<() => void>();
  /** False without SMTP_URL: nothing would send a row, so none is written (the routes answer 503). */
  readonly enabled: boolean;

  constructor(deps: {
    prisma: PrismaClient;
    tokens: MailTokens;
    authSecret: string;
    logger: Logger;
    settings: MailOutboxSettings;
    now?: () => number;
  }) {
    this.#db = deps.prisma;
    this.#tokens = deps.tokens;
    this.#logger = deps.logger;
    this.#now = deps.now ?? Date.now;
    this.#box = new SecretBox(deps.authSecret, SEAL_PURPOSE);
    this.#recipientKey = Buffer.from(hkdfSync("sha256", deps.authSecret, KDF_SALT, RECIPIENT_INFO, 32));
    this.#budget = deps.settings.budgetPerHour ?? DEFAULT_MAIL_BUDGET;
    this.enabled = deps.settings.enabled;
  }

  /** The key the budget counts `address` by: an HMAC of its normalised form, also what logs show. */
  recipientKey(address: string): string {
    const parsed = emailSchema.safeParse(address);
    const normalised = parsed.success ? parsed.data : address.trim().toLowerCase();
    return createHmac("sha256", this.#recipientKey).update(normalised).digest("base64url");
  }

  /** Calls `listener` after each commit that queued a mail (the worker of this process wakes up). */
  onQueued(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Makes the token and writes the mail's row in one transaction. Inside a caller's `tx` the row
   * shows once that commits: the caller then calls {@link wake} (else the next poll finds it). An
   * address that gets no mail runs the same statements against rows that cannot exist and writes
   * a `skipped` row.
   */
  async enqueueTokenMail(mail: TokenMail, tx?: Prisma.TransactionClient): Promise<Enqueued> {
    const outcome = tx ? await this.#write(tx, mail) : await this.#db.$transaction((t) => this.#write(t, mail));
    if (outcome === "queued" && !tx) this.wake();
    if (outcome === "dropped")
      this.#logger.warn(
        { kind: mail.kind, recipient: this.recipientKey(mail.to).slice(0, 16) },
        "mail dropped: the address is over its mail budget",
      );
    return outcome;
  }

  /**
   * Writes the row of a mail whose link or code the caller made (or a notice), under the same
   * per-address budget and lock as {@link enqueueTokenMail}. Inside a caller's `tx` the caller
   * calls {@link wake} once that commits.
   */
  async enqueueMail(mail: PlainMail, tx?: Prisma.TransactionClient): Promise<Enqueued> {
    const outcome = tx ? await this.#writePlain(tx, mail) : await this.#db.$transaction((t) => this.#writePlain(t, mail));
    if (outcome === "queued" && !tx) this.wake();
    if (outcome === "dropped")
      this.#logger.warn(
        { kind: mail.kind, recipient: this.recipientKey(mail.to).slice(0, 16) },
        "mail dropped: the address is over its mail budget",
      );
    return outcome;
  }

  async #writePlain(tx: Prisma.TransactionClient, mail: PlainMail): Promise<Enqueued> {
    const now = this.#now();
    const key = this.recipientKey(mail.to);
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${LOCK_CLASS}::int, hashtext(${key}))`;
    const used = await tx.mailOutbox.count({
      where: { recipientKey: key, state: { in: COUNTED }, createdAt: { gt: new Date(now - MAIL_BUDGET_WINDOW_MS) } },
    });
    const send = mail.body !== undefined && used < this.#budget;
    const id = randomUUID();
    const payload = send ? this.#box.seal(JSON.stringify({ to: mail.to, link: mail.body }), context(id)) : null;
    const state = send ? "pending" : mail.body !== undefined ? "dropped" : "skipped";
    await tx.mailOutbox.create({
      data: { id, kind: mail.kind, recipientKey: key, payload, state, nextAttemptAt: new Date(now), createdAt: new Date(now) },
    });
    return send ? "queued" : state === "dropped" ? "dropped" : "skipped";
  }

  /**
   * Tells this process's worker that a mail was queued. In a later turn of the event loop, once
   * the route has answered: the worker's claim must not run ahead of the answer (its time would
   * tell a queued mail from none).
   */
  wake(): void {
    setImmediate(() => {
      for (const listener of this.#listeners) listener();
    });
  }

  async #write(tx: Prisma.TransactionClient, mail: TokenMail): Promise<Enqueued> {
    const now = this.#now();
    const key = this.recipientKey(mail.to);
    // Concurrent mails to one address count one after the other; each count sees the rows of
    // the transactions that held the lock before it (a new statement, a new snapshot).
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${LOCK_CLASS}::int, hashtext(${key}))`;
    const used = await tx.mailOutbox.count({
      where: { recipientKey: key, state: { in: COUNTED }, createdAt: { gt: new Date(now - MAIL_BUDGET_WINDOW_MS) } },
    });
    const overBudget = used >= this.#budget;
    let token: string | undefined;
    if (mail.userId !== undefined && !overBudget) {
      token = await this.#tokens.issue(mail.purpose, mail.userId, mail.tokenEmail ?? mail.to, tx);
      // Within the cool-down issue stopped after its first statement: the other two follow.
      if (token === undefined) await this.#issueNothing(tx, mail, false);
    } else await this.#issueNothing(tx, mail, true);
    const id = randomUUID();
    const payload = token === undefined ? null : this.#box.seal(JSON.stringify({ to: mail.to, link: mail.link(token) }), context(id));
    const state = token !== undefined ? "pending" : overBudget && mail.userId !== undefined ? "dropped" : "skipped";
    await tx.mailOutbox.create({
      data: { id, kind: mail.kind, recipientKey: key, payload, state, nextAttemptAt: new Date(now), createdAt: new Date(now) },
    });
    return token !== undefined ? "queued" : state === "dropped" ? "dropped" : "skipped";
  }

  /**
   * The three statements of MailTokens.issue (services/mail-tokens.ts: the cool-down read, the
   * delete of older tokens, the insert) against rows that cannot exist: a random user id and a
   * random token hash, read and deleted through the same indexes.
   */
  async #issueNothing(tx: Prisma.TransactionClient, mail: TokenMail, withCooldownRead: boolean): Promise<void> {
    const nobody = randomUUID();
    const now = this.#now();
    if (withCooldownRead)
      await tx.verification.findFirst({
        where: {
          userId: nobody,
          purpose: mail.purpose,
          email: mail.to,
          createdAt: { gt: new Date(now - MAIL_COOLDOWN_MS) },
          expiresAt: { gt: new Date(now) },
        },
        select: { id: true },
      });
    await tx.verification.deleteMany({ where: { userId: nobody, purpose: mail.purpose } });
    await tx.verification.deleteMany({ where: { tokenHash: new Uint8Array(randomBytes(32)) } });
  }

  /**
   * Claims up to `limit` due mails for this worker: pending rows whose time has come and sending
   * rows whose lease ran out (their worker died). The claim moves them to `sending` until
   * `leaseMs` from now, under FOR UPDATE SKIP LOCKED: a row another instance is claiming is
   * skipped, and once claimed it is no longer due. A row this secret cannot open is given up.
   */
  async claim(limit: number, leaseMs: number): Promise<ClaimedMail[]> {
    const now = this.#now();
    const rows = await this.#db.$queryRaw<{ id: string; kind: string; payload: string | null; attempts: number }[]>`
      UPDATE "mail_outbox" AS o
      SET "state" = 'sending', "attempts" = o."attempts" + 1, "next_attempt_at" = ${new Date(now + leaseMs)}
      FROM (
        SELECT "id" FROM "mail_outbox"
        WHERE "state" IN ('pending', 'sending') AND "next_attempt_at" <= ${new Date(now)}
        ORDER BY "next_attempt_at"
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      ) AS due
      WHERE o."id" = due."id"
      RETURNING o."id", o."kind", o."payload", o."attempts"`;
    const claimed: ClaimedMail[] = [];
    for (const row of rows) {
      const opened = row.payload === null ? undefined : this.#box.open(row.payload, context(row.id));
      const parsed = opened === undefined ? undefined : (JSON.parse(opened) as { to: string; link: string });
      if (parsed) claimed.push({ id: row.id, kind: row.kind as MailKind, to: parsed.to, link: parsed.link, attempts: row.attempts });
      else await this.#finish(row.id, row.attempts, "dead", "sealed with another AUTH_SECRET");
    }
    return claimed;
  }

  /** The mail went out: the row keeps no recipient or link, only what the budget counts. */
  async sent(mail: ClaimedMail): Promise<boolean> {
    return this.#finish(mail.id, mail.attempts, "sent", null);
  }

  /**
   * The attempt failed: the row waits `retryInMs`, or is given up (`dead`, scrubbed) when that is
   * undefined. `error` is stored and must hold no secret (packages/mailer's messages hold none).
   */
  async failed(mail: ClaimedMail, error: string, retryInMs: number | undefined): Promise<boolean> {
    if (retryInMs === undefined) return this.#finish(mail.id, mail.attempts, "dead", error);
    const { count } = await this.#db.mailOutbox.updateMany({
      where: { id: mail.id, state: "sending", attempts: mail.attempts },
      data: { state: "pending", nextAttemptAt: new Date(this.#now() + retryInMs), lastError: error.slice(0, 200) },
    });
    return count === 1;
  }

  /** Ends a claimed row; false when its lease ran out and another worker claimed it meanwhile. */
  async #finish(id: string, attempts: number, state: "sent" | "dead", error: string | null): Promise<boolean> {
    const { count } = await this.#db.mailOutbox.updateMany({
      where: { id, state: "sending", attempts },
      data: {
        state,
        payload: null,
        lastError: error?.slice(0, 200) ?? null,
        ...(state === "sent" ? { sentAt: new Date(this.#now()) } : {}),
      },
    });
    return count === 1;
  }

  /** Deletes finished rows older than the budget window (housekeeping); returns how many. */
  async purgeFinished(): Promise<number> {
    const { count } = await this.#db.mailOutbox.deleteMany({
      where: { state: { notIn: ["pending", "sending"] }, createdAt: { lte: new Date(this.#now() - MAIL_BUDGET_WINDOW_MS) } },
    });
    return count;
  }
}

/** Additional data of a row's seal: a payload moved to another row does not open. */
const context = (id: string) => `mail_outbox:${id}`;
