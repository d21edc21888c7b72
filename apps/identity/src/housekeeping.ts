import type { Logger } from "pino";
import type { OrganizationHousekeeping } from "./organizations/deletion.js";
import type { IdentityService } from "./services/identity.js";

/** The authorization server's share of a round (oauth-provider/store.ts). */
interface OAuthHousekeeping {
  purgeExpired(): Promise<number>;
}

/** The security event log's share of a round (security-events/retention.ts). */
interface EventHousekeeping {
  sweepExpired(): Promise<number>;
}

/** What one housekeeping round did. */
export interface HousekeepingResult {
  purgedSessions: number;
  /** Expired rows of the authorization server (oauth-provider/store.ts). */
  purgedOAuth: number;
  /** Expired challenges and trusted devices (services/sessions.ts). */
  purgedChallenges: number;
  retiredKeys: number;
  rotatedKid: string | undefined;
  purgedTokens: number;
  completedDeletions: number;
  /** Finished outbox rows past the mail budget's window (services/mail-outbox.ts). */
  purgedMails: number;
  /** Organizations deleted once the API finished their deletion (organizations/deletion.ts). */
  completedOrganizationDeletions: number;
  /** Invitations long past their expiry, whatever became of them. */
  purgedInvitations: number;
  /** Security events past AUTH_EVENT_RETENTION_DAYS (security-events/retention.ts). */
  purgedEvents: number;
}

/** What housekeeping works on (the mailed tokens and deletions are optional for older callers). */
type HousekeepingService = Pick<IdentityService, "sessions" | "keys"> &
  Partial<Pick<IdentityService, "mailTokens" | "settings" | "mailOutbox">>;

/**
 * One round of the identity's periodic work: delete expired sessions, challenges, trusted devices
 * and mailed tokens, delete
 * finished outbox rows the mail budget no longer counts, delete the users and the organizations
 * whose deletion the API has finished (services/account-settings.ts, organizations/deletion.ts)
 * and invitations long expired, retire keys whose overlap has passed, and rotate the signing key
 * when `keyRotationMs` (> 0) says it is due, and delete security events past their retention
 * (`options.events`, security-events/retention.ts, in batches). Each step logs its own failure (a
 * database outage) and the round goes on; it never throws. The organizations' work is
 * `options.organizations` (IdentityApp.organizations, app.ts).
 */
export async function runHousekeeping(
  service: HousekeepingService,
  options: {
    logger: Logger;
    keyRotationMs: number;
    organizations?: OrganizationHousekeeping | undefined;
    oauth?: OAuthHousekeeping | undefined;
    events?: EventHousekeeping | undefined;
  },
): Promise<HousekeepingResult> {
  const { logger } = options;
  const attempt = async <T>(what: string, run: () => Promise<T>, fallback: T): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      logger.warn({ err: (error as Error).message }, `${what} failed; will retry next round`);
      return fallback;
    }
  };
  const purgedSessions = await attempt("session purge", () => service.sessions.purgeExpired(), 0);
  if (purgedSessions) logger.info({ purged: purgedSessions }, "expired sessions purged");
  const purgedChallenges = await attempt("challenge purge", () => service.sessions.purgeExpiredChallenges(), 0);
  const { oauth } = options;
  const purgedOAuth = oauth ? await attempt("oauth purge", () => oauth.purgeExpired(), 0) : 0;
  const { mailTokens, settings, mailOutbox } = service;
  const purgedTokens = mailTokens ? await attempt("mailed token purge", () => mailTokens.purgeExpired(), 0) : 0;
  const purgedMails = mailOutbox ? await attempt("mail outbox purge", () => mailOutbox.purgeFinished(), 0) : 0;
  const completedDeletions = settings ? await attempt("account deletion", () => settings.completeDeletions(), 0) : 0;
  if (completedDeletions) logger.info({ deleted: completedDeletions }, "deleted accounts removed after the API finished");
  const { organizations } = options;
  const completedOrganizationDeletions = organizations
    ? await attempt("organization deletion", () => organizations.completeDeletions(), 0)
    : 0;
  if (completedOrganizationDeletions)
    logger.info({ deleted: completedOrganizationDeletions }, "deleted organizations removed after the API finished");
  const purgedInvitations = organizations ? await attempt("invitation purge", () => organizations.purgeInvitations(), 0) : 0;
  const rotated = await attempt("key rotation", () => service.keys.rotateIfDue(options.keyRotationMs), undefined);
  const retiredKeys = await attempt("key retirement", () => service.keys.retireExpired(), 0);
  if (retiredKeys) logger.info({ retired: retiredKeys }, "superseded signing keys retired");
  const { events } = options;
  const purgedEvents = events ? await attempt("security event sweep", () => events.sweepExpired(), 0) : 0;
  if (purgedEvents) logger.info({ purged: purgedEvents }, "security events past their retention deleted");
  return {
    purgedSessions,
    purgedOAuth,
    purgedChallenges,
    retiredKeys,
    rotatedKid: rotated?.kid,
    purgedTokens,
    completedDeletions,
    purgedMails,
    completedOrganizationDeletions,
    purgedInvitations,
    purgedEvents,
  };
}

/**
 * Runs {@link runHousekeeping} now and then every `intervalMs` (an unref'd timer: it never keeps
 * the process alive); a round still running when the next is due lets it pass, so a slow database
 * never piles rounds up. Returns the function that stops it.
 */
export function startHousekeeping(
  service: HousekeepingService,
  options: {
    logger: Logger;
    keyRotationMs: number;
    intervalMs: number;
    organizations?: OrganizationHousekeeping | undefined;
    oauth?: OAuthHousekeeping | undefined;
    events?: EventHousekeeping | undefined;
  },
): () => void {
  let running = false;
  const round = () => {
    if (running) return;
    running = true;
    void runHousekeeping(service, options).finally(() => {
      running = false;
    });
  };
  const timer = setInterval(round, options.intervalMs);
  timer.unref();
  round();
  return () => clearInterval(timer);
}
