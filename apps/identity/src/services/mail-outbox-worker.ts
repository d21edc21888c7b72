import { isMailUnavailable, type Mailer } from "@app/mailer";
import type { Logger } from "pino";
import { mailSendFailures, mailsSent } from "../metrics.js";
import { renderAccountMail } from "./account-mail.js";
import type { ClaimedMail, MailOutbox } from "./mail-outbox.js";

/** How the worker paces itself; the defaults suit production, tests shorten them. */
export interface MailWorkerOptions {
  /** Longest wait between two looks at the outbox when nothing woke the worker (default 5 s). */
  pollMs?: number;
  /** Mails claimed (and sent at once) per pass (default 5). */
  batch?: number;
  /** Attempts before a mail is given up as `dead` (default 8). */
  maxAttempts?: number;
  /** Wait after the first failure, doubling with each further one (default 15 s)... */
  retryBaseMs?: number;
  /** ...up to this (default 10 min). */
  retryMaxMs?: number;
  /** How long a claimed mail is this worker's before another may take it over (default 2 min). */
  leaseMs?: number;
}

const DEFAULTS: Required<MailWorkerOptions> = {
  pollMs: 5_000,
  batch: 5,
  maxAttempts: 8,
  retryBaseMs: 15_000,
  retryMaxMs: 10 * 60_000,
  // Longer than packages/mailer's worst case (connection, greeting and socket timeouts of 10 s).
  leaseMs: 2 * 60_000,
};

/** The wait after the `attempt`-th failure: `baseMs`, doubling per attempt, at most `maxMs`. */
export function retryDelayMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(baseMs * 2 ** Math.max(0, attempt - 1), maxMs);
}

/**
 * Sends the outbox's mails (services/mail-outbox.ts) over packages/mailer. It looks at the outbox
 * when this process queues a mail (woken at commit), after a pass that filled its batch, and
 * every `pollMs` otherwise (retries that came due, rows another instance queued and could not
 * send). A failed attempt waits {@link retryDelayMs}; after `maxAttempts` the mail is given up
 * and logged at error level. Logs name a mail by its row id, never by its address; the metrics
 * count sends and failures.
 */
export class MailOutboxWorker {
  readonly #outbox: MailOutbox;
  readonly #mailer: Mailer;
  readonly #logger: Logger;
  readonly #options: Required<MailWorkerOptions>;
  #running: Promise<void> | undefined;
  #stopped = false;
  #woken = false;
  #wake: (() => void) | undefined;
  #unsubscribe: (() => void) | undefined;
  #lastProblem = 0;

  constructor(deps: { outbox: MailOutbox; mailer: Mailer; logger: Logger; options?: MailWorkerOptions }) {
    this.#outbox = deps.outbox;
    this.#mailer = deps.mailer;
    this.#logger = deps.logger;
    this.#options = { ...DEFAULTS, ...deps.options };
  }

  /** Starts the loop (once). */
  start(): void {
    if (this.#running || this.#stopped) return;
    this.#unsubscribe = this.#outbox.onQueued(() => this.#poke());
    this.#running = this.#loop();
  }

  /** Stops the loop and waits for the mails being sent to finish (their rows end as usual). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    this.#poke();
    await this.#running;
  }

  /** One pass: claims the due mails and sends them; returns how many it claimed. */
  async drain(): Promise<number> {
    const mails = await this.#outbox.claim(this.#options.batch, this.#options.leaseMs);
    await Promise.all(mails.map((mail) => this.#deliver(mail)));
    return mails.length;
  }

  #poke(): void {
    this.#woken = true;
    this.#wake?.();
  }

  async #loop(): Promise<void> {
    while (!this.#stopped) {
      this.#woken = false;
      let claimed = 0;
      try {
        claimed = await this.drain();
      } catch (error) {
        // A database outage: say so at most once a minute, keep polling.
        if (Date.now() - this.#lastProblem > 60_000) {
          this.#lastProblem = Date.now();
          this.#logger.warn({ err: (error as Error).message }, "mail outbox unavailable; will retry");
        }
      }
      if (this.#stopped || claimed >= this.#options.batch || this.#woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#options.pollMs);
        timer.unref();
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
    }
  }

  async #deliver(mail: ClaimedMail): Promise<void> {
    try {
      await this.#mailer.send({ to: mail.to, ...renderAccountMail(mail.kind, mail.link) });
    } catch (error) {
      // packages/mailer's messages name the SMTP reply code only; anything else is named by its type.
      const reason = isMailUnavailable(error) ? error.message : `${(error as Error).name ?? "Error"} while sending`;
      const last = mail.attempts >= this.#options.maxAttempts;
      mailSendFailures.inc({ final: String(last) });
      const retryIn = last ? undefined : retryDelayMs(mail.attempts, this.#options.retryBaseMs, this.#options.retryMaxMs);
      await this.#outbox.failed(mail, reason, retryIn).catch(() => undefined);
      if (last) this.#logger.error({ mail: mail.id, kind: mail.kind, attempts: mail.attempts, err: reason }, "mail given up");
      else
        this.#logger.warn(
          { mail: mail.id, kind: mail.kind, attempt: mail.attempts, retryInMs: retryIn, err: reason },
          "mail not sent; will retry",
        );
      return;
    }
    mailsSent.inc();
    // Sent: a failure to record it leaves the row to its lease, and it may go out once more.
    const recorded = await this.#outbox.sent(mail).catch(() => false);
    if (!recorded) this.#logger.warn({ mail: mail.id, kind: mail.kind }, "sent mail not recorded: its lease had run out");
  }
}
