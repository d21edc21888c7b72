import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { SecretBox } from "@app/secret-box";

/** Salt as in services/sessions.ts and packages/secret-box, with infos of their own: independent keys. */
const KDF_SALT = "token-auth-service";
const KDF_INFO = "two-factor-hmac";
const SEAL_PURPOSE = "two-factor-totp";

/** What a MAC is taken of: the kind of secret is part of the input, so one kind never matches another. */
export type MacLabel = "pending" | "trusted-device" | "backup-code" | "email-code";

/** A random secret for a cookie: 32 bytes, base64url (43 characters). */
export function randomSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** A random id for a row whose id a cookie carries: 16 bytes, base64url (22 characters). */
export function randomId(): string {
  return randomBytes(16).toString("base64url");
}

/** The shape of {@link randomSecret}. */
export const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;
/** The shape of `<randomId>.<randomSecret>`. */
export const ID_SECRET_SHAPE = /^[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}$/;

/**
 * The keys of second factors, derived from AUTH_SECRET: HMAC-SHA256 of the secrets identity
 * keeps only as hashes (pending sign-ins, trusted devices, backup codes, emailed codes), and the
 * packages/secret-box seal of TOTP secrets, bound to their user. A new AUTH_SECRET ends them all,
 * as it ends sessions.
 */
export class TwoFactorSecrets {
  readonly #key: Buffer;
  readonly #box: SecretBox;

  constructor(authSecret: string) {
    this.#key = Buffer.from(hkdfSync("sha256", authSecret, KDF_SALT, KDF_INFO, 32));
    this.#box = new SecretBox(authSecret, SEAL_PURPOSE);
  }

  /** HMAC-SHA256 of `value` as a `label` secret. */
  mac(label: MacLabel, value: string): Uint8Array<ArrayBuffer> {
    return new Uint8Array(createHmac("sha256", this.#key).update(`${label}\0${value}`).digest());
  }

  /** {@link mac} as base64url text (backup codes are a text array). */
  macText(label: MacLabel, value: string): string {
    return Buffer.from(this.mac(label, value)).toString("base64url");
  }

  /** True when `stored` is the MAC of `value` (compared in constant time). */
  matches(stored: Uint8Array, label: MacLabel, value: string): boolean {
    const actual = this.mac(label, value);
    return stored.length === actual.length && timingSafeEqual(stored, actual);
  }

  /** Seals a user's TOTP secret: it opens only for that user's row. */
  sealTotp(userId: string, secret: string): string {
    return this.#box.seal(secret, totpContext(userId));
  }

  /** The TOTP secret of `userId`, or undefined when this AUTH_SECRET cannot open it. */
  openTotp(userId: string, sealed: string): string | undefined {
    return this.#box.open(sealed, totpContext(userId));
  }
}

const totpContext = (userId: string) => `two_factor:${userId}`;
