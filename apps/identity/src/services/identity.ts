import type { PublicJwk, SignInBody, SignUpBody } from "@app/contracts";
import type { Prisma, PrismaClient, Session, User } from "@app/db";
import { AppError } from "@app/http-kit";
import type { Mailer } from "@app/mailer";
import type { Logger } from "pino";
import { countSignIn, NO_REQUEST, type RequestFacts, recordEvent } from "../security-events/record.js";
import { refusedFor } from "../sign-in/failures.js";
import { enqueueWebhook } from "../webhooks/outbox.js";
import { sessionData, sessionsRevoked } from "./account-events.js";
import { AccountRecovery } from "./account-recovery.js";
import { AccountSettings } from "./account-settings.js";
import { Accounts } from "./accounts.js";
import { KeySet } from "./key-set.js";
import { MailOutbox } from "./mail-outbox.js";
import { MailTokens } from "./mail-tokens.js";
import { MailedLinks } from "./mailed-links.js";
import type { SqlPool } from "./raw-query.js";
import { type SessionMeta, Sessions } from "./sessions.js";
import { issueToken, type TokenSettings } from "./tokens.js";

/** Settings the identity flows need. */
export interface IdentitySettings {
  authSecret: string;
  issuer: string;
  audience: string;
  sessionTtlMs: number;
  /** Sessions per user before the oldest are dropped (default 50). */
  maxSessionsPerUser?: number;
  /** How long a new key is published before it signs (default 10.5 min). */
  keyActivationDelayMs?: number;
  /** Public base URL: mailed links are built from it. */
  baseUrl?: string;
  /** Origins a callbackURL may point to besides the base URL's. */
  trustedOrigins?: readonly string[];
  /** Sign-in of a user whose email is not verified answers 403 `email_not_verified`. */
  requireEmailVerification?: boolean;
  /** Mails one address may receive per hour, whatever caused them (services/mail-outbox.ts; default 5). */
  mailBudgetPerHour?: number;
  /** `exp` - `iat` of the JWTs issued, in seconds (JWT_EXPIRES_IN; default the contract's 30 days). */
  jwtLifetimeSeconds?: number;
}

/** A signed-in session: the cookie value to set and the public view. */
export interface SignedIn {
  token: string;
  session: Session;
  user: User;
}

/** Result of get-session: the session, its user, the fresh JWT, and a cookie to re-set if it slid. */
export interface SessionWithJwt {
  session: Session;
  user: User;
  jwt: string;
  /** Set when the expiry slid: the cookie must be written again with the new expiry. */
  renewedToken?: string;
}

/**
 * The identity flows the routes call: sign-up, sign-in, get-session (JWT issuance), sign-out
 * and the public key set. No `req`/`res` here.
 */
export class IdentityService {
  readonly accounts: Accounts;
  readonly sessions: Sessions;
  readonly keys: KeySet;
  readonly mailTokens: MailTokens;
  /** Account mails wait here for the worker (services/mail-outbox-worker.ts) that sends them. */
  readonly mailOutbox: MailOutbox;
  readonly recovery: AccountRecovery;
  /** Reset and verification links in use: what a proven mailbox ends (services/mailed-links.ts). */
  readonly links: MailedLinks;
  readonly settings: AccountSettings;
  readonly #settings: IdentitySettings;
  readonly #now: () => number;

  /**
   * @param deps - `pool`: the `pg` pool under `prisma` (`Db.pool`), for the two reads of
   *   get-session as raw SQL (one round trip each); without it they go through Prisma's raw API.
   */
  constructor(deps: {
    prisma: PrismaClient;
    pool?: SqlPool;
    logger: Logger;
    settings: IdentitySettings;
    now?: () => number;
    /**
     * Outgoing mail, sent by a MailOutboxWorker its owner starts (main.ts); without it nothing
     * is queued and every mail-sending route answers 503 `mail_unavailable`.
     */
    mailer?: Mailer;
  }) {
    this.#now = deps.now ?? Date.now;
    this.#settings = deps.settings;
    this.accounts = new Accounts({ prisma: deps.prisma });
    const pool = deps.pool === undefined ? {} : { pool: deps.pool };
    this.sessions = new Sessions({
      prisma: deps.prisma,
      ...pool,
      authSecret: deps.settings.authSecret,
      ttlMs: deps.settings.sessionTtlMs,
      now: this.#now,
      ...(deps.settings.maxSessionsPerUser === undefined ? {} : { maxPerUser: deps.settings.maxSessionsPerUser }),
    });
    this.keys = new KeySet({
      prisma: deps.prisma,
      ...pool,
      authSecret: deps.settings.authSecret,
      logger: deps.logger,
      now: this.#now,
      ...(deps.settings.keyActivationDelayMs === undefined ? {} : { activationDelayMs: deps.settings.keyActivationDelayMs }),
    });
    this.mailTokens = new MailTokens({ prisma: deps.prisma, authSecret: deps.settings.authSecret, now: this.#now });
    this.mailOutbox = new MailOutbox({
      prisma: deps.prisma,
      tokens: this.mailTokens,
      authSecret: deps.settings.authSecret,
      logger: deps.logger,
      now: this.#now,
      settings: {
        enabled: deps.mailer !== undefined,
        ...(deps.settings.mailBudgetPerHour === undefined ? {} : { budgetPerHour: deps.settings.mailBudgetPerHour }),
      },
    });
    this.recovery = new AccountRecovery({
      prisma: deps.prisma,
      tokens: this.mailTokens,
      outbox: this.mailOutbox,
      links: { baseUrl: deps.settings.baseUrl ?? deps.settings.issuer, trustedOrigins: deps.settings.trustedOrigins ?? [] },
      logger: deps.logger,
    });
    this.links = new MailedLinks({
      prisma: deps.prisma,
      tokens: this.mailTokens,
      outbox: this.mailOutbox,
      baseUrl: deps.settings.baseUrl ?? deps.settings.issuer,
    });
    this.settings = new AccountSettings({ prisma: deps.prisma, now: this.#now });
  }

  /**
   * Signs up and queues the verification mail (best effort: the outbox sends it later, so a slow
   * or failing SMTP server never delays or undoes the account; send-verification-email sends it again).
   */
  async signUp(input: SignUpBody, meta: SessionMeta, facts: RequestFacts = NO_REQUEST): Promise<SignedIn> {
    if (input.callbackURL !== undefined) this.recovery.callback(input.callbackURL);
    const user = await this.accounts.signUp(input, facts);
    await this.recovery.sendVerificationQuietly(user, input.callbackURL);
    const { token, session } = await this.sessions.create(user.id, meta, { within: signedIn(user.id, "password", facts) });
    countSignIn({ type: "sign_in", method: "password" });
    return { token, session, user };
  }

  /**
   * Signs in. With `requireEmailVerification`, an unverified user gets 403 `email_not_verified`
   * (after the password check, so it reveals nothing to a stranger) and a new verification mail
   * (at most one a minute: services/mail-tokens.ts).
   */
  async signIn(input: SignInBody, meta: SessionMeta, facts: RequestFacts = NO_REQUEST): Promise<SignedIn> {
    const user = await this.sessions.admit(await this.checkSignIn(input));
    const { token, session } = await this.sessions.create(user.id, meta, { within: signedIn(user.id, "password", facts) });
    countSignIn({ type: "sign_in", method: "password" });
    return { token, session, user };
  }

  /**
   * The checks of an email sign-in without its session (sign-in/finish.ts opens it, or the
   * second-factor step): the password, then the verification rule of {@link signIn}.
   */
  async checkSignIn(input: SignInBody): Promise<User> {
    const user = await this.accounts.signIn(input);
    if (this.#settings.requireEmailVerification && !user.emailVerified) {
      await this.recovery.sendVerificationQuietly(user, input.callbackURL);
      throw refusedFor(new AppError("email_not_verified", "verify your email address first: a new link is on its way"), user.id);
    }
    return user;
  }

  /**
   * A JWT for a live session (GET /api/auth/token, as better-auth's JWT plugin). An impersonation
   * session's JWT names its admin in `act` (RFC 8693), so the session is a required argument: no
   * caller can issue an impersonation's JWT as the user's own.
   */
  async issueJwt(user: User, session: Pick<Session, "impersonatedBy">): Promise<string> {
    const { signing } = await this.keys.view();
    const actorId = session.impersonatedBy ?? undefined;
    return issueToken(user, signing, this.#tokenSettings(), actorId);
  }

  /**
   * Validates the cookie value and issues a JWT; undefined without a live session (no JWT then:
   * an expired, unknown or banned user's session gives none).
   */
  async getSession(cookieToken: string | undefined): Promise<SessionWithJwt | undefined> {
    const active = await this.sessions.validate(cookieToken);
    if (!active) return undefined;
    const jwt = await this.issueJwt(active.user, active.session);
    const result: SessionWithJwt = { session: active.session, user: active.user, jwt };
    if (active.refreshed && cookieToken) result.renewedToken = cookieToken;
    return result;
  }

  #tokenSettings(): TokenSettings {
    const { issuer, audience, jwtLifetimeSeconds } = this.#settings;
    return { issuer, audience, now: this.#now, ...(jwtLifetimeSeconds === undefined ? {} : { lifetimeSeconds: jwtLifetimeSeconds }) };
  }

  /** Ends the session of the cookie with its `sign_out` event and `session.revoked` webhook. */
  async signOut(cookieToken: string | undefined, facts: RequestFacts = NO_REQUEST): Promise<void> {
    await this.sessions.revoke(cookieToken, async (tx, ended) => {
      const userId = ended.user.id;
      await recordEvent(tx, { type: "sign_out", userId }, facts);
      await sessionsRevoked(tx, userId, [ended.session.id], "sign_out");
    });
  }

  /** The public keys to serve at /api/auth/jwks. */
  async publicKeys(): Promise<PublicJwk[]> {
    const { published } = await this.keys.view();
    return published.map((k) => k.publicJwk);
  }
}

/** The `within` of a session a sign-up opens: its `sign_in` event and `session.created` webhook. */
function signedIn(userId: string, method: string, facts: RequestFacts) {
  return async (tx: Prisma.TransactionClient, session: Session) => {
    await recordEvent(tx, { type: "sign_in", userId, method }, facts);
    await enqueueWebhook(tx, "session.created", sessionData(session));
  };
}
