import { hkdfSync } from "node:crypto";
import { EncryptJWT, jwtDecrypt } from "jose";

/**
 * What the callback needs from the sign-in request: the provider, the random state, nonce and
 * PKCE verifier, and where to send the browser. It travels in an HttpOnly cookie sealed with
 * AES-256-GCM (jose's `dir` JWE) under a key derived from AUTH_SECRET, with a ten-minute `exp`:
 * only this browser holds it, nobody can read or forge it, and no table grows per attempt.
 */
export interface FlowState {
  provider: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  callbackURL: string;
  errorCallbackURL: string;
  newUserCallbackURL: string;
  /** Set by link-social: the provider identity is linked to this signed-in user, nobody is signed in. */
  link?: FlowLink;
}

/** The signed-in user (and the session that asked) a link-social flow links to. */
export interface FlowLink {
  userId: string;
  sessionId: string;
}

/** How long a sign-in may take at the provider. */
export const FLOW_TTL_SECONDS = 10 * 60;

/** Same salt as services/sessions.ts, an info of its own: an independent key. */
const KDF_SALT = "token-auth-service";
const KDF_INFO = "oidc-flow-state";

export class FlowStateSealer {
  readonly #key: Uint8Array;
  readonly #now: () => number;

  constructor(authSecret: string, now: () => number = Date.now) {
    this.#key = new Uint8Array(hkdfSync("sha256", authSecret, KDF_SALT, KDF_INFO, 32));
    this.#now = now;
  }

  async seal(state: FlowState): Promise<string> {
    const now = Math.floor(this.#now() / 1000);
    return new EncryptJWT({ ...state })
      .setProtectedHeader({ alg: "dir", enc: "A256GCM" })
      .setIssuedAt(now)
      .setExpirationTime(now + FLOW_TTL_SECONDS)
      .encrypt(this.#key);
  }

  /** The state sealed in `value`, or undefined when it is absent, altered, foreign or expired. */
  async open(value: string | undefined): Promise<FlowState | undefined> {
    if (!value) return undefined;
    try {
      const { payload } = await jwtDecrypt(value, this.#key, { currentDate: new Date(this.#now()) });
      const fields = ["provider", "state", "nonce", "codeVerifier", "callbackURL", "errorCallbackURL", "newUserCallbackURL"] as const;
      if (!fields.every((f) => typeof payload[f] === "string")) return undefined;
      const link = payload.link as Partial<FlowLink> | undefined;
      if (link !== undefined && (typeof link?.userId !== "string" || typeof link.sessionId !== "string")) return undefined;
      return payload as unknown as FlowState;
    } catch {
      return undefined;
    }
  }
}
