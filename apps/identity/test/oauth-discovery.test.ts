import { DEFAULT_KEY_ACTIVATION_DELAY_MS } from "@app/http-kit";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { frozenClock } from "./kit.js";
import {
  authorizationUrl,
  authorizeAndExchange,
  Browser,
  type OAuthKit,
  pkce,
  registerPublicClient,
  signUp,
  startIdentity,
  walk,
} from "./oauth-kit.js";

// The authorization server's metadata (RFC 8414 and OpenID Connect Discovery), the key set it
// advertises (identity's own /api/auth/jwks, the provider's own route unreachable), and its
// signing key following the key set's rotation. Identity runs on a clock the test moves, so a
// rotated key reaches its activation without waiting.

const clock = frozenClock(Date.now());
let ctx: OAuthKit;

beforeAll(async () => {
  ctx = await startIdentity({ now: clock.now });
});
afterAll(async () => {
  await ctx?.close();
});

describe("the authorization server's metadata", () => {
  it("is served at both well-known paths with better-auth's endpoints and the contract's key set", async () => {
    const openid = await fetch(`${ctx.baseUrl}/.well-known/openid-configuration`);
    const oauth = await fetch(`${ctx.baseUrl}/.well-known/oauth-authorization-server`);
    expect([openid.status, oauth.status]).toEqual([200, 200]);
    const doc = (await openid.json()) as Record<string, unknown>;
    expect(await oauth.json()).toEqual(doc);
    expect(openid.headers.get("access-control-allow-origin")).toBe("*");
    const base = `${ctx.baseUrl}/api/auth`;
    expect(doc).toMatchObject({
      issuer: ctx.baseUrl,
      authorization_endpoint: `${base}/oauth2/authorize`,
      token_endpoint: `${base}/oauth2/token`,
      registration_endpoint: `${base}/oauth2/register`,
      userinfo_endpoint: `${base}/oauth2/userinfo`,
      revocation_endpoint: `${base}/oauth2/revoke`,
      jwks_uri: `${base}/jwks`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      id_token_signing_alg_values_supported: ["EdDSA"],
      token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post", "none"],
    });
    expect([...(doc.scopes_supported as string[])].sort()).toEqual([
      "email",
      "mcp:read",
      "mcp:write",
      "offline_access",
      "openid",
      "profile",
    ]);
    for (const absent of [
      "end_session_endpoint",
      "introspection_endpoint",
      "pushed_authorization_request_endpoint",
      "device_authorization_endpoint",
    ]) {
      expect(doc[absent], absent).toBeUndefined();
    }
  });

  it("leaves the provider's other routes unreachable", async () => {
    for (const path of [
      "/jwks",
      "/api/auth/oauth2/jwks",
      "/api/auth/oauth2/end-session",
      "/api/auth/oauth2/introspect",
      "/api/auth/oauth2/par",
      "/auth",
      "/token",
      "/reg",
    ]) {
      const get = await fetch(`${ctx.baseUrl}${path}`);
      const post = await fetch(`${ctx.baseUrl}${path}`, { method: "POST" });
      expect([get.status, post.status], path).toEqual([404, 404]);
    }
    const keys = (await (await fetch(`${ctx.baseUrl}/api/auth/jwks`)).json()) as { keys: { kid: string; d?: string }[] };
    expect(keys.keys.every((key) => key.d === undefined)).toBe(true);
  });
});

describe("signing keys", () => {
  it("sign ID and access tokens with the key set's signing key, and follow its rotation", async () => {
    const browser = new Browser();
    await signUp(ctx, browser, "keys");
    const clientId = await registerPublicClient(ctx);
    const before = await authorizeAndExchange(ctx, browser, clientId, { scope: "openid mcp:read" });
    const oldKid = (await ctx.kit.service.keys.view()).signing.kid;
    expect(decodeProtectedHeader(before.access_token).kid).toBe(oldKid);
    expect(decodeProtectedHeader(before.id_token ?? "").kid).toBe(oldKid);

    clock.advance(60_000);
    const rotated = await ctx.kit.service.keys.rotate();
    clock.advance(DEFAULT_KEY_ACTIVATION_DELAY_MS + 1_000);
    expect((await ctx.kit.service.keys.view()).signing.kid).toBe(rotated.kid);
    const after = await authorizeAndExchange(ctx, browser, clientId, { scope: "openid mcp:read" }, { expectConsent: false });
    expect(decodeProtectedHeader(after.access_token)).toMatchObject({ kid: rotated.kid, typ: "at+jwt" });
    expect(decodeProtectedHeader(after.id_token ?? "").kid).toBe(rotated.kid);

    // Both verify against the published key set: the superseded key stays published.
    const jwks = createRemoteJWKSet(new URL(`${ctx.baseUrl}/api/auth/jwks`));
    for (const tokens of [before, after]) {
      await jwtVerify(tokens.access_token, jwks, { issuer: ctx.baseUrl, audience: ctx.resource, typ: "at+jwt" });
      await jwtVerify(tokens.id_token ?? "", jwks, { issuer: ctx.baseUrl, audience: clientId });
    }
  });
});

describe("how recent a sign-in must be", () => {
  it("honours max_age against the identity session's age", async () => {
    const browser = new Browser();
    await signUp(ctx, browser, "recent");
    const clientId = await registerPublicClient(ctx);
    await authorizeAndExchange(ctx, browser, clientId, { scope: "openid" });
    clock.advance(2 * 60 * 60 * 1000);
    // The same identity session in a browser without the provider's session, whose sign-in time
    // the provider takes from the identity session (the provider's own clock is the real one).
    const other = new Browser();
    const cookie = "identity.session_token";
    other.setCookie(ctx.baseUrl, cookie, browser.cookie(ctx.baseUrl, cookie) ?? "");
    const { challenge } = pkce();
    const request = (extra: Record<string, string>) =>
      walk(
        other,
        authorizationUrl(ctx, { client_id: clientId, scope: "openid", code_challenge: challenge, code_challenge_method: "S256", ...extra }),
      );
    const tooOld = await request({ max_age: "3600" });
    expect([tooOld.at, tooOld.url.searchParams.get("error")]).toEqual(["client", "login_required"]);
    const recentEnough = await request({ max_age: String(3 * 60 * 60) });
    expect(recentEnough.at).toBe("client");
    expect(recentEnough.url.searchParams.get("code")).toBeTruthy();
  });
});
