import { describe, expect, it } from "vitest";
import { nonceCookie } from "./oauth-nonce-cookie.js";

describe("nonceCookie", () => {
  it("is __Host-mcp_oauth (Secure, Path=/) behind an https base URL", () => {
    const cookie = nonceCookie("https://app.example.com");
    expect(cookie.set("abc", 600)).toBe("__Host-mcp_oauth=abc; Max-Age=600; Path=/; HttpOnly; Secure; SameSite=Lax");
    expect(cookie.clear()).toBe("__Host-mcp_oauth=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Lax");
    expect(cookie.read({ headers: { cookie: "a=1; __Host-mcp_oauth=n-1_x; mcp_oauth_nonce=other" } })).toBe("n-1_x");
  });

  it("is mcp_oauth_nonce on the OAuth routes' path behind a plain http base URL, and reads only well-formed values", () => {
    const cookie = nonceCookie("http://localhost:3000");
    expect(cookie.set("abc", 600)).toBe("mcp_oauth_nonce=abc; Max-Age=600; Path=/api/mcp-oauth; HttpOnly; SameSite=Lax");
    expect(cookie.read({ headers: { cookie: "__Host-mcp_oauth=x; mcp_oauth_nonce=ok" } })).toBe("ok");
    expect(cookie.read({ headers: { cookie: "mcp_oauth_nonce=bad%20value" } })).toBeUndefined();
    expect(cookie.read({ headers: {} })).toBeUndefined();
  });
});
