import { type PoolLike, type ServeMetrics, serviceMetrics } from "@app/http-kit";
import { Counter, Gauge, type Registry, register } from "prom-client";

// Identity's series (docs/operations.md#metrics). The counters live on prom-client's global
// registry from the start, counted wherever the event happens; main.ts serves them, with the
// gauges below, only when METRICS_PORT is set.

/**
 * Sign-in outcomes by method (password, provider, passkey, magic-link, email-otp) and outcome
 * (success, failure): every `sign_in` and `sign_in_failed` event is counted here once its write
 * committed (security-events/record.ts `countSignIn`), so the series and the event log agree.
 */
export const signIns = new Counter({
  name: "identity_sign_ins_total",
  help: "Sign-in attempts by method and outcome",
  labelNames: ["method", "outcome"] as const,
});

/**
 * Requests a limiter refused, by limiter: the sign-in, sign-up, mail and code limits
 * (`sign-in-ip`, `mail-address`, ...: middleware/rate-limits.ts), the admin routes' (admin/limits.ts),
 * the event log's (security-events/limits.ts), all 429, and the password queue's
 * (services/password-queue.ts: `password-queue-client` 429, `password-queue-full` 503). Each
 * limiter sets its series to 0 when it is built; the label is the limiter, never a user or address.
 */
export const rateLimitRefusals = new Counter({
  name: "identity_rate_limit_refusals_total",
  help: "Requests refused by a limiter (429; 503 for password-queue-full), by limiter",
  labelNames: ["limiter"] as const,
});

/** Account mails handed to the SMTP server (services/mail-outbox-worker.ts; logs name each mail's kind). */
export const mailsSent = new Counter({
  name: "identity_mail_sent_total",
  help: "Account mails sent",
});

/** Failed attempts to send an account mail; `final="true"` when the mail is given up. */
export const mailSendFailures = new Counter({
  name: "identity_mail_send_failures_total",
  help: "Failed attempts to send an account mail; final=true when the mail is given up",
  labelNames: ["final"] as const,
});

/**
 * Key set change announcements (NOTIFY on the key set channel, services/key-set-events.ts) by
 * outcome: `sent` (delivered when the change commits), `failed`.
 */
export const keySetPushes = new Counter({
  name: "identity_key_set_pushes_total",
  help: "Key set change announcements to the verifiers, by outcome (sent, failed)",
  labelNames: ["outcome"] as const,
});

// Every series an alert reads exists from the start at 0, so its first event is an increase.
for (const final of ["true", "false"]) mailSendFailures.inc({ final }, 0);
for (const outcome of ["sent", "failed"]) keySetPushes.inc({ outcome }, 0);

/** What the signing key's age is read from: the key set's view (services/key-set.ts). */
export interface SigningKeySource {
  view(): Promise<{ signing: { createdAt: Date } }>;
}

/**
 * Everything identity serves on METRICS_PORT: the counters above, the process and pool series and
 * request durations (serviceMetrics), and the age of the key that signs now, read from the key
 * set at scrape time (one query; NaN while the database cannot be read).
 */
export function identityMetrics(options: {
  port: number;
  host?: string;
  pool: PoolLike;
  keys: SigningKeySource;
  now?: () => number;
  registry?: Registry;
}): ServeMetrics {
  const registry = options.registry ?? register;
  const now = options.now ?? Date.now;
  const { keys } = options;
  new Gauge({
    name: "identity_signing_key_age_seconds",
    help: "Age of the key that signs tokens now",
    registers: [registry],
    async collect() {
      try {
        const { signing } = await keys.view();
        this.set((now() - signing.createdAt.getTime()) / 1000);
      } catch {
        this.set(Number.NaN);
      }
    },
  });
  return serviceMetrics({ ...options, registry });
}
