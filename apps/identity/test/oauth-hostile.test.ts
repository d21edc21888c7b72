import { createRemoteJWKSet, errors as joseErrors, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  authorizationUrl,
  authorizeAndExchange,
  Browser,
  type OAuthKit,
  pkce,
  postConsent,
  REDIRECT_URI,
  registerPublicClient,
  signUp,
  startIdentity,
  token,
  walk,
} from "./oauth-kit.js";

// What the authorization server refuses: redirect URIs a client did not register, a code used
// twice, a PKCE verifier that does not match or no PKCE at all, a resource it does not serve, an
// expired token, a consent query someone altered or another user's session, a banned user.

let ctx: OAuthKit;

beforeAll(async () => {
  // One-second access tokens, so the expired-token case waits about a second.
  ctx = await startIdentity({ env: { OAUTH_ACCESS_TOKEN_TTL: "1" } });
});
afterAll(async () => {
  await ctx?.close();
});

/** A signed-in browser and a public client. */
async function setUp(label: string) {
  const browser = new Browser();
  const user = await signUp(ctx, browser, label);
  return { browser, user, clientId: await registerPublicClient(ctx) };
}

/** A code issued to `clientId` for the signed-in `browser`, and the verifier of its challenge. */
async function codeFor(browser: Browser, clientId: string, scope = "mcp:read") {
  const { verifier, challenge } = pkce();
  const url = authorizationUrl(ctx, { client_id: clientId, scope, code_challenge: challenge, code_challenge_method: "S256" });
  let stop = await walk(browser, url);
  if (stop.at === "consent") {
    const res = await postConsent(ctx, browser, stop.url, { accept: true });
    stop = await walk(browser, ((await res.json()) as { redirect_uri: string }).redirect_uri);
  }
  return { code: stop.url.searchParams.get("code") ?? "", verifier };
}

const exchange = (clientId: string, code: string, verifier: string | undefined) =>
  token(ctx, {
    grant_type: "authorization_code",
    code,
    redirect_uri: REDIRECT_URI,
    client_id: clientId,
    ...(verifier === undefined ? {} : { code_verifier: verifier }),
  });

describe("the authorization endpoint refuses", () => {
  it("a redirect URI the client did not register: an error answer, never a redirect there", async () => {
    const { browser, clientId } = await setUp("redirect");
    const { challenge } = pkce();
    for (const redirect of ["http://evil.example/callback", `${REDIRECT_URI}/more`, `${REDIRECT_URI}?x=1`]) {
      const url = authorizationUrl(ctx, {
        client_id: clientId,
        scope: "openid",
        redirect_uri: redirect,
        code_challenge: challenge,
        code_challenge_method: "S256",
      });
      const res = await browser.request(url, { headers: { accept: "text/html" } });
      expect(res.status, redirect).toBe(400);
      expect(res.headers.get("location")).toBeNull();
      expect(((await res.json()) as { code: string; message: string }).message).toContain("redirect_uri");
    }
    const unknown = await browser.request(authorizationUrl(ctx, { client_id: "no-such-client", scope: "openid" }));
    expect([unknown.status, unknown.headers.get("location")]).toEqual([400, null]);
  });

  it("a request without PKCE, or with the plain method", async () => {
    const { browser, clientId } = await setUp("nopkce");
    const missing = await walk(browser, authorizationUrl(ctx, { client_id: clientId, scope: "openid" }));
    expect([missing.at, missing.url.searchParams.get("error")]).toEqual(["client", "invalid_request"]);
    expect(missing.url.searchParams.get("error_description")).toContain("PKCE");
    const plain = await walk(
      browser,
      authorizationUrl(ctx, { client_id: clientId, scope: "openid", code_challenge: "a".repeat(43), code_challenge_method: "plain" }),
    );
    expect([plain.at, plain.url.searchParams.get("error")]).toEqual(["client", "invalid_request"]);
  });

  it("a resource it does not serve, at the authorization and at the token endpoint", async () => {
    const { browser, clientId } = await setUp("resource");
    const { challenge } = pkce();
    const url = authorizationUrl(ctx, {
      client_id: clientId,
      scope: "mcp:read",
      resource: "https://api.evil.example/mcp",
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    const stop = await walk(browser, url);
    expect([stop.at, stop.url.searchParams.get("error")]).toEqual(["client", "invalid_target"]);

    const { code, verifier } = await codeFor(browser, clientId);
    const other = await token(ctx, {
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
      resource: "https://api.evil.example/mcp",
    });
    expect(other.body.error).toBe("invalid_target");
  });
});

describe("the token endpoint refuses", () => {
  it("a code used twice, and ends what the first use issued", async () => {
    const { browser, clientId } = await setUp("replay");
    const { code, verifier } = await codeFor(browser, clientId);
    const first = await exchange(clientId, code, verifier);
    expect(first.status).toBe(200);
    const second = await exchange(clientId, code, verifier);
    expect([second.status, second.body.error]).toEqual([400, "invalid_grant"]);
    const refresh = await token(ctx, { grant_type: "refresh_token", refresh_token: first.body.refresh_token ?? "", client_id: clientId });
    expect(refresh.body.error).toBe("invalid_grant");
  });

  it("a PKCE verifier that does not match the challenge, or none", async () => {
    const { browser, clientId } = await setUp("verifier");
    const { code } = await codeFor(browser, clientId);
    expect((await exchange(clientId, code, pkce().verifier)).body.error).toBe("invalid_grant");
    const again = await codeFor(browser, clientId);
    expect((await exchange(clientId, again.code, undefined)).body.error).toBe("invalid_grant");
  });

  it("a code issued to another client", async () => {
    const { browser, clientId } = await setUp("otherclient");
    const { code, verifier } = await codeFor(browser, clientId);
    const thief = await registerPublicClient(ctx, "Thief");
    expect((await exchange(thief, code, verifier)).body.error).toBe("invalid_grant");
  });
});

describe("expired tokens", () => {
  it("an access token past OAUTH_ACCESS_TOKEN_TTL: the JWT fails verification and the opaque one userinfo", async () => {
    const { browser, clientId } = await setUp("expired");
    const mcp = await authorizeAndExchange(ctx, browser, clientId, { scope: "mcp:read" });
    const jwks = createRemoteJWKSet(new URL(`${ctx.baseUrl}/api/auth/jwks`));
    const { payload } = await jwtVerify(mcp.access_token, jwks, { audience: ctx.resource, typ: "at+jwt" });
    const later = new Date(((payload.exp ?? 0) + 1) * 1000);
    await expect(jwtVerify(mcp.access_token, jwks, { audience: ctx.resource, currentDate: later })).rejects.toBeInstanceOf(
      joseErrors.JWTExpired,
    );

    const oidc = await authorizeAndExchange(ctx, browser, clientId, { scope: "openid" });
    const userinfo = () => fetch(`${ctx.baseUrl}/api/auth/oauth2/userinfo`, { headers: { authorization: `Bearer ${oidc.access_token}` } });
    const deadline = Date.now() + 5_000;
    let status = (await userinfo()).status;
    while (status === 200 && Date.now() < deadline) status = (await userinfo()).status;
    expect(status).toBe(401);
  });
});

describe("the consent decision refuses", () => {
  it("a query someone altered, stripped of its signature or padded, another user's session, and a second answer", async () => {
    const { browser, clientId } = await setUp("forged");
    const { challenge } = pkce();
    const page = await walk(
      browser,
      authorizationUrl(ctx, { client_id: clientId, scope: "mcp:read", code_challenge: challenge, code_challenge_method: "S256" }),
    );
    if (page.at !== "consent") throw new Error("expected the consent page");
    const query = new URLSearchParams(page.url.search);
    const altered = (change: (q: URLSearchParams) => void) => {
      const copy = new URLSearchParams(query);
      change(copy);
      return new URL(`${page.url.origin}${page.url.pathname}?${copy}`);
    };
    const forgeries = [
      altered((q) => q.set("scope", "mcp:read mcp:write")),
      altered((q) => q.set("client_id", "another-client")),
      altered((q) => q.set("exp", String(Number(q.get("exp")) + 3600))),
      altered((q) => q.delete("sig")),
      altered((q) => q.append("sig", q.get("sig") ?? "")),
      altered((q) => q.set("sig", `${(q.get("sig") ?? "").slice(0, -2)}AA`)),
      altered((q) => q.append("extra", "1")),
    ];
    for (const forged of forgeries) {
      const res = await postConsent(ctx, browser, forged, { accept: true });
      expect(res.status, forged.search).toBe(401);
      expect(((await res.json()) as { code: string }).code).toBe("invalid_signature");
    }

    const stranger = new Browser();
    await signUp(ctx, stranger, "stranger");
    expect((await postConsent(ctx, stranger, page.url, { accept: true })).status).toBe(403);
    expect((await postConsent(ctx, new Browser(), page.url, { accept: true })).status).toBe(401);

    const accepted = await postConsent(ctx, browser, page.url, { accept: true });
    expect(accepted.status).toBe(200);
    expect((await walk(browser, ((await accepted.json()) as { redirect_uri: string }).redirect_uri)).at).toBe("client");
    expect((await postConsent(ctx, browser, page.url, { accept: false })).status).toBe(400);
  });
});

describe("a banned user", () => {
  it("loses the session, so a new authorization asks to sign in, and the refresh tokens stop", async () => {
    const { browser, user, clientId } = await setUp("banned");
    const tokens = await authorizeAndExchange(ctx, browser, clientId, { scope: "mcp:read" });
    await ctx.kit.db.prisma.user.update({ where: { id: user.id }, data: { banned: true } });
    const refresh = await token(ctx, { grant_type: "refresh_token", refresh_token: tokens.refresh_token ?? "", client_id: clientId });
    expect(refresh.body.error).toBe("invalid_grant");
    const { challenge } = pkce();
    const url = authorizationUrl(ctx, { client_id: clientId, scope: "mcp:read", code_challenge: challenge, code_challenge_method: "S256" });
    expect((await walk(browser, url)).at).toBe("sign-in");
  });
});

describe("an impersonation session", () => {
  it("authorizes no application: the request ends with access_denied and the consent decision answers 403", async () => {
    const { browser, user, clientId } = await setUp("impersonated");
    const admin = await signUp(ctx, new Browser(), "admin");
    const { token: cookie } = await ctx.kit.service.sessions.create(user.id, {}, { impersonatedBy: admin.id });
    const actor = new Browser();
    actor.setCookie(ctx.baseUrl, "identity.session_token", cookie);
    const { challenge } = pkce();
    const url = authorizationUrl(ctx, { client_id: clientId, scope: "mcp:read", code_challenge: challenge, code_challenge_method: "S256" });
    const ended = await walk(actor, url);
    expect([ended.at, ended.url.searchParams.get("error")]).toEqual(["client", "access_denied"]);

    const page = await walk(browser, url);
    if (page.at !== "consent") throw new Error("expected the consent page");
    expect((await postConsent(ctx, actor, page.url, { accept: true })).status).toBe(403);
  });
});
