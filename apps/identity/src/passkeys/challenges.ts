import { createHmac, hkdfSync, randomBytes, randomUUID } from "node:crypto";
import { SESSION_COOKIE_SUFFIX } from "@app/contracts";
import type { Prisma, PrismaClient } from "@app/db";
import { AppError } from "@app/http-kit";
import type { CookieOptions, Request, Response } from "express";
import type { CookieSettings } from "../middleware/session-cookie.js";

/** How long a ceremony's challenge is good for (better-auth's passkey plugin: 5 minutes). */
export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

/** The two ceremonies, as `AuthChallenge.purpose`. */
export type Ceremony = "passkey-registration" | "passkey-authentication";

/** What a ceremony's row keeps besides the secret's hash. */
export interface ChallengeData {
  /** The base64url challenge the options carried, which the response must sign. */
  challenge: string;
}

/** A consumed challenge. */
export interface ConsumedChallenge extends ChallengeData {
  userId: string | null;
}

/** Salt as in services/sessions.ts, with an info of its own: an independent key. */
const KDF_SALT = "token-auth-service";
const KDF_INFO = "passkey-challenge-hmac";
const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/**
 * The name of the challenge cookie: `<prefix>.better-auth-passkey`, as better-auth's passkey
 * plugin names it (`advanced.webAuthnChallengeCookie` under its cookie prefix); our prefix is the
 * session cookie's (COOKIE_PREFIX).
 */
export function challengeCookieName(cookie: CookieSettings): string {
  const prefix = cookie.name.endsWith(SESSION_COOKIE_SUFFIX) ? cookie.name.slice(0, -SESSION_COOKIE_SUFFIX.length) : cookie.name;
  return `${prefix}.better-auth-passkey`;
}

/**
 * Single-use WebAuthn challenges in `auth_challenge`. The browser holds a random secret in an
 * HttpOnly cookie; the row holds only HMAC-SHA256(secret) under a key derived from AUTH_SECRET
 * (as services/sessions.ts does with session secrets), the ceremony, the user it was made for and
 * the challenge. Consuming deletes the row first, so a challenge answers one verification at most,
 * whether that verification succeeds or not.
 */
export class PasskeyChallenges {
  readonly #db: PrismaClient;
  readonly #key: Buffer;
  readonly #now: () => number;
  readonly #cookieName: string;
  readonly #cookieOptions: CookieOptions;

  constructor(deps: { prisma: PrismaClient; authSecret: string; cookie: CookieSettings; now: () => number }) {
    this.#db = deps.prisma;
    this.#key = Buffer.from(hkdfSync("sha256", deps.authSecret, KDF_SALT, KDF_INFO, 32));
    this.#now = deps.now;
    this.#cookieName = challengeCookieName(deps.cookie);
    this.#cookieOptions = { httpOnly: true, sameSite: "lax", secure: deps.cookie.secure, path: "/" };
  }

  #hash(secret: string): Uint8Array<ArrayBuffer> {
    return new Uint8Array(createHmac("sha256", this.#key).update(secret).digest());
  }

  /** Stores the challenge of a ceremony and sets its cookie on `res`. */
  async issue(res: Response, ceremony: Ceremony, userId: string | undefined, data: ChallengeData): Promise<void> {
    const secret = randomBytes(32).toString("base64url");
    const now = this.#now();
    await this.#db.authChallenge.create({
      data: {
        id: randomUUID(),
        purpose: ceremony,
        subject: userId ?? "",
        secretHash: this.#hash(secret),
        userId: userId ?? null,
        data: data as unknown as Prisma.InputJsonObject,
        expiresAt: new Date(now + CHALLENGE_TTL_MS),
        createdAt: new Date(now),
      },
    });
    res.cookie(this.#cookieName, secret, { ...this.#cookieOptions, maxAge: CHALLENGE_TTL_MS });
  }

  /**
   * Takes the request's challenge of `ceremony` out of the store and clears its cookie: 400
   * `challenge_expired` when the cookie is missing, names no challenge of this ceremony, was used
   * or ran out of time (start the ceremony again).
   */
  async consume(req: Request, res: Response, ceremony: Ceremony): Promise<ConsumedChallenge> {
    const secret = (req.cookies as Record<string, unknown> | undefined)?.[this.#cookieName];
    res.clearCookie(this.#cookieName, this.#cookieOptions);
    if (typeof secret !== "string" || !SECRET_SHAPE.test(secret)) throw expired("no passkey challenge: start again");
    const row = await this.#db.authChallenge.findFirst({ where: { secretHash: this.#hash(secret), purpose: ceremony } });
    if (!row) throw expired("the passkey challenge is unknown or used: start again");
    // The delete that removes the row wins the challenge; a concurrent request with the same cookie gets 0.
    const { count } = await this.#db.authChallenge.deleteMany({ where: { id: row.id } });
    if (count !== 1) throw expired("the passkey challenge is unknown or used: start again");
    if (row.expiresAt.getTime() <= this.#now()) throw expired("the passkey challenge expired: start again");
    const data = row.data as Partial<ChallengeData> | null;
    if (typeof data?.challenge !== "string") throw expired("the passkey challenge is unknown or used: start again");
    return { challenge: data.challenge, userId: row.userId };
  }
}

function expired(message: string): AppError {
  return new AppError("challenge_expired", message);
}
