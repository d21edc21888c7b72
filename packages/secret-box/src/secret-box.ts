import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

const VERSION = "v1";

/**
 * Authenticated encryption of secrets at rest: AES-256-GCM under a key derived from a server
 * secret with HKDF-SHA256, one derived key per `purpose` (identity: signing keys under
 * AUTH_SECRET; api: MCP OAuth tokens under DATA_ENCRYPTION_KEY). `context` (row id, field) is
 * bound as additional data, so a ciphertext moved to another row or field does not decrypt.
 */
export class SecretBox {
  readonly #key: Buffer;

  constructor(secret: string, purpose: string) {
    this.#key = Buffer.from(hkdfSync("sha256", secret, "token-auth-service", purpose, 32));
  }

  /** Encrypts `plaintext`; returns `v1.<iv>.<tag>.<ciphertext>` in base64url. */
  seal(plaintext: string, context: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), body].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(".");
  }

  /** Decrypts a {@link seal} result; returns undefined when this secret cannot open it. */
  open(sealed: string, context: string): string | undefined {
    const [version, iv, tag, body] = sealed.split(".");
    if (version !== VERSION || !iv || !tag || body === undefined) return undefined;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.#key, Buffer.from(iv, "base64url"));
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8");
    } catch {
      return undefined;
    }
  }
}
