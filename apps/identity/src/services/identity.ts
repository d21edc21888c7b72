import type { SignInBody, SignUpBody } from "@app/contracts";
import type { PrismaClient, Session, User } from "@app/db";
import type { Logger } from "pino";
import { Accounts } from "./accounts.js";
import { KeySet, type PublicJwk } from "./key-set.js";
import type { SqlPool } from "./raw-query.js";
import { type SessionMeta, Sessions } from "./sessions.js";
import { issueToken } from "./tokens.js";

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
  readonly #settings: IdentitySettings;
  readonly #now: () => number;

  /**
   * @param deps - `pool`: the `pg` pool under `prisma` (`Db.pool`), for the two reads of
   *   get-session as raw SQL (one round trip each); without it they go through Prisma's raw API.
   */
  constructor(deps: { prisma: PrismaClient; pool?: SqlPool; logger: Logger; settings: IdentitySettings; now?: () => number }) {
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
  }

  async signUp(input: SignUpBody, meta: SessionMeta): Promise<SignedIn> {
    const user = await this.accounts.signUp(input);
    const { token, session } = await this.sessions.create(user.id, meta);
    return { token, session, user };
  }

  async signIn(input: SignInBody, meta: SessionMeta): Promise<SignedIn> {
    const user = await this.accounts.signIn(input);
    const { token, session } = await this.sessions.create(user.id, meta);
    return { token, session, user };
  }

  /** Validates the cookie value and issues a JWT; undefined without a live session (no JWT then). */
  async getSession(cookieToken: string | undefined): Promise<SessionWithJwt | undefined> {
    const active = await this.sessions.validate(cookieToken);
    if (!active) return undefined;
    const { signing } = await this.keys.view();
    const jwt = await issueToken(active.user, signing, {
      issuer: this.#settings.issuer,
      audience: this.#settings.audience,
      now: this.#now,
    });
    const result: SessionWithJwt = { session: active.session, user: active.user, jwt };
    if (active.refreshed && cookieToken) result.renewedToken = cookieToken;
    return result;
  }

  async signOut(cookieToken: string | undefined): Promise<void> {
    await this.sessions.revoke(cookieToken);
  }

  /** The public keys to serve at /api/auth/jwks. */
  async publicKeys(): Promise<PublicJwk[]> {
    const { published } = await this.keys.view();
    return published.map((k) => k.publicJwk);
  }
}
