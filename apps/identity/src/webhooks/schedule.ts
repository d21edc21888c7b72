import type { WebhookSettings } from "./config.js";

/** The retry settings {@link nextAttemptAt} reads. */
export type RetrySchedule = Pick<WebhookSettings, "retryBaseMs" | "retryMaxMs" | "retryWindowMs">;

/**
 * The wait after the `attempts`-th failed attempt: WEBHOOK_RETRY_BASE_MS, doubled per further
 * attempt, at most WEBHOOK_RETRY_MAX_MS, shortened by up to a fifth at random so endpoints that
 * failed together are not retried in one burst. With the defaults (30 s, 4 h, 24 h): 30 s, 1 min,
 * 2 min, … 2 h 8 min, then every 4 h: about 14 attempts in the day.
 */
export function retryDelayMs(schedule: RetrySchedule, attempts: number, random: () => number = Math.random): number {
  const exponent = Math.min(Math.max(attempts - 1, 0), 40);
  const full = Math.min(schedule.retryBaseMs * 2 ** exponent, schedule.retryMaxMs);
  return Math.round(full * (1 - 0.2 * random()));
}

/**
 * When a delivery that failed its `attempts`-th attempt at `now` tries again, or undefined when
 * that would be after the retry window of its event (created at `eventAt`): the delivery failed.
 */
export function nextAttemptAt(
  schedule: RetrySchedule,
  attempts: number,
  eventAt: Date,
  now: Date,
  random: () => number = Math.random,
): Date | undefined {
  const next = new Date(now.getTime() + retryDelayMs(schedule, attempts, random));
  return next.getTime() > eventAt.getTime() + schedule.retryWindowMs ? undefined : next;
}
