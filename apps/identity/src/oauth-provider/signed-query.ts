import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";

/** The signature, its issue time and the names it covers, as better-auth's oauth-provider names them. */
const SIG = "sig";
const ISSUED_AT = "ba_iat";
const SIGNED_NAMES = "ba_param";
const EXPIRES = "exp";

/** Entries sorted by name, then value: the form the signature covers. */
function canonical(params: URLSearchParams): string {
  const entries = [...params.entries()].sort(([ka, va], [kb, vb]) => (ka < kb ? -1 : ka > kb ? 1 : va < vb ? -1 : va > vb ? 1 : 0));
  return new URLSearchParams(entries).toString();
}

/**
 * The consent page's query (`/oauth/consent?…` on the web origin): the interaction's facts, signed
 * with an HMAC under a key derived from AUTH_SECRET, in better-auth's oauth-provider layout, so its
 * `oauthProviderClient` finds the signed parameters in the page's URL (a `sig`, and `ba_param` naming
 * every signed parameter) and sends them back as `oauth_query`. Any change to a signed parameter, a
 * second `sig` or a parameter the signature does not name, and a query past its `exp`, is refused.
 */
export class ConsentQuery {
  readonly #key: Buffer;

  constructor(authSecret: string) {
    this.#key = Buffer.from(hkdfSync("sha256", authSecret, "token-auth-service", "oauth-consent-query", 32));
  }

  /** The signed query string of `fields`, valid until `expiresAt` (seconds since the epoch). */
  sign(fields: Record<string, string>, expiresAt: number, now: number): string {
    const params = new URLSearchParams(fields);
    params.set(EXPIRES, String(expiresAt));
    params.set(ISSUED_AT, String(now));
    for (const name of [...new Set([...params.keys(), SIGNED_NAMES])].sort()) params.append(SIGNED_NAMES, name);
    params.set(SIG, this.#mac(params));
    return params.toString();
  }

  /** The fields of a query {@link sign} made, or undefined when it is forged, altered or expired. */
  verify(query: string, now: number): Record<string, string> | undefined {
    const params = new URLSearchParams(query.startsWith("?") ? query.slice(1) : query);
    const sigs = params.getAll(SIG);
    if (sigs.length !== 1) return undefined;
    params.delete(SIG);
    const expected = Buffer.from(this.#mac(params));
    const given = Buffer.from(sigs[0] ?? "");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    const named = new Set(params.getAll(SIGNED_NAMES));
    if ([...params.keys()].some((name) => !named.has(name))) return undefined;
    const expiresAt = Number(params.get(EXPIRES));
    if (!Number.isFinite(expiresAt) || expiresAt * 1000 < now) return undefined;
    const fields: Record<string, string> = {};
    for (const [name, value] of params) if (name !== SIGNED_NAMES && name !== EXPIRES && name !== ISSUED_AT) fields[name] = value;
    return fields;
  }

  #mac(params: URLSearchParams): string {
    return createHmac("sha256", this.#key).update(canonical(params)).digest("base64url");
  }
}
