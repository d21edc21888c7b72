import type { IncomingMessage } from "node:http";

/** The browser-binding cookie of the MCP OAuth flow. */
export interface NonceCookie {
  readonly name: string;
  /** The `Set-Cookie` value that stores `nonce` for `maxAgeS` seconds. */
  set(nonce: string, maxAgeS: number): string;
  /** The `Set-Cookie` value that deletes it. */
  clear(): string;
  /** The nonce a request carries (the first cookie of that name), or undefined. */
  read(req: Pick<IncomingMessage, "headers">): string | undefined;
}

/** Cookie name and path when the public base URL is https: `__Host-` (Secure, no Domain, Path=/ as the prefix demands). */
export const SECURE_NONCE_COOKIE = "__Host-mcp_oauth";
/** Cookie name when the base URL is plain http (development): `__Host-` needs Secure, so no prefix. */
export const PLAIN_NONCE_COOKIE = "mcp_oauth_nonce";

/**
 * The nonce cookie that binds an MCP authorization to the browser that started it: HttpOnly,
 * SameSite=Lax (sent on the authorization server's top-level redirect back to the callback).
 * Over https it is `__Host-mcp_oauth` (Secure; the prefix requires `Path=/`, and forbids a Domain,
 * so a sibling subdomain cannot plant one); over http it is `mcp_oauth_nonce` on
 * `Path=/api/mcp-oauth`.
 */
export function nonceCookie(baseUrl: string): NonceCookie {
  const secure = new URL(baseUrl).protocol === "https:";
  const name = secure ? SECURE_NONCE_COOKIE : PLAIN_NONCE_COOKIE;
  const attributes = secure ? "Path=/; HttpOnly; Secure; SameSite=Lax" : "Path=/api/mcp-oauth; HttpOnly; SameSite=Lax";
  return {
    name,
    set: (nonce, maxAgeS) => `${name}=${nonce}; Max-Age=${Math.floor(maxAgeS)}; ${attributes}`,
    clear: () => `${name}=; Max-Age=0; ${attributes}`,
    read(req) {
      for (const part of (req.headers.cookie ?? "").split(";")) {
        const at = part.indexOf("=");
        if (at < 0 || part.slice(0, at).trim() !== name) continue;
        const value = part.slice(at + 1).trim();
        return /^[\w-]{1,200}$/.test(value) ? value : undefined;
      }
      return undefined;
    },
  };
}
