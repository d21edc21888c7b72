import { createHash } from "node:crypto";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ORIGIN } from "./kit.js";
import {
  authorizationUrl,
  authorizeAndExchange,
  Browser,
  type OAuthKit,
  PASSWORD,
  pkce,
  postConsent,
  postForm,
  REDIRECT_URI,
  registerPublicClient,
  sendJson,
  signUp,
  startIdentity,
  token,
  walk,
} from "./oauth-kit.js";

// The tokens of the authorization server for an MCP client (a public client registered with the
// refresh_token grant): JWT access tokens for the MCP resource, refresh tokens rotated on every
// use, revocation, consent remembered across browser sessions, and the user's list of authorized
// applications with its revocation. Real PostgreSQL, identity on a free port.

let ctx: OAuthKit;
let jwks: ReturnType<typeof createRemoteJWKSet>;

beforeAll(async () => {
  ctx = await startIdentity();
  jwks = createRemoteJWKSet(new URL(`${ctx.baseUrl}/api/auth/jwks`));
});
afterAll(async () => {
  await ctx?.close();
});

const MCP = "mcp:read mcp:write";

describe("access tokens for the MCP resource", () => {
  it("are at+jwt signed with the key set's signing key, with aud, sub, client_id and scope, for OAUTH_ACCESS_TOKEN_TTL", async () => {
    const browser = new Browser();
    const user = await signUp(ctx, browser, "mcp");
    const clientId = await registerPublicClient(ctx);
    // No resource named: MCP scopes mean the MCP server.
    const tokens = await authorizeAndExchange(ctx, browser, clientId, { scope: MCP }, { expectConsent: true });
    const header = decodeProtectedHeader(tokens.access_token);
    const { signing } = await ctx.kit.service.keys.view();
    expect(header).toEqual({ alg: "EdDSA", typ: "at+jwt", kid: signing.kid });
    const { payload } = await jwtVerify(tokens.access_token, jwks, { issuer: ctx.baseUrl, audience: ctx.resource, typ: "at+jwt" });
    expect(payload).toMatchObject({ sub: user.id, client_id: clientId, scope: MCP, aud: ctx.resource });
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(3600);
    expect(tokens).toMatchObject({ token_type: "Bearer", expires_in: 3600, scope: MCP });
    expect(tokens.refresh_token).toBeTruthy();

    // Named explicitly, with OpenID scopes beside: the token is still the MCP server's.
    const named = await authorizeAndExchange(
      ctx,
      browser,
      clientId,
      { scope: `openid ${MCP}`, resource: ctx.resource },
      { expectConsent: true },
    );
    const claims = await jwtVerify(named.access_token, jwks, { issuer: ctx.baseUrl, audience: ctx.resource, typ: "at+jwt" });
    expect(claims.payload.scope).toBe(MCP);
    expect(named.id_token).toBeTruthy();
  });

  it("rotates refresh tokens: the old one is refused, and its reuse ends the whole authorization", async () => {
    const browser = new Browser();
    await signUp(ctx, browser, "rotate");
    const clientId = await registerPublicClient(ctx);
    const first = await authorizeAndExchange(ctx, browser, clientId, { scope: "mcp:read" });
    const refresh = (refresh_token: string) => token(ctx, { grant_type: "refresh_token", refresh_token, client_id: clientId });
    const second = await refresh(first.refresh_token ?? "");
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.refresh_token).toBeTruthy();
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    await jwtVerify(second.body.access_token, jwks, { audience: ctx.resource, typ: "at+jwt" });

    const replayed = await refresh(first.refresh_token ?? "");
    expect([replayed.status, replayed.body.error]).toEqual([400, "invalid_grant"]);
    // Reuse of a rotated token is theft or a broken client: the newest token ends with it.
    expect((await refresh(second.body.refresh_token ?? "")).body.error).toBe("invalid_grant");
  });

  it("revokes a refresh token (RFC 7009) and an opaque userinfo access token", async () => {
    const browser = new Browser();
    await signUp(ctx, browser, "revoke");
    const clientId = await registerPublicClient(ctx);
    const mcp = await authorizeAndExchange(ctx, browser, clientId, { scope: "mcp:read" });
    const revoke = (tokenValue: string, hint: string) =>
      postForm(`${ctx.baseUrl}/api/auth/oauth2/revoke`, { token: tokenValue, token_type_hint: hint, client_id: clientId });
    expect((await revoke(mcp.refresh_token ?? "", "refresh_token")).status).toBe(200);
    const refused = await token(ctx, { grant_type: "refresh_token", refresh_token: mcp.refresh_token ?? "", client_id: clientId });
    expect(refused.body.error).toBe("invalid_grant");

    const oidc = await authorizeAndExchange(ctx, browser, clientId, { scope: "openid email" });
    const userinfo = () => fetch(`${ctx.baseUrl}/api/auth/oauth2/userinfo`, { headers: { authorization: `Bearer ${oidc.access_token}` } });
    expect((await userinfo()).status).toBe(200);
    expect((await revoke(oidc.access_token, "access_token")).status).toBe(200);
    expect((await userinfo()).status).toBe(401);
  });
});

describe("response_mode=form_post", () => {
  it("answers oidc-provider's page, whose script its policy allows by hash and whose form may post to the client", async () => {
    const browser = new Browser();
    await signUp(ctx, browser, "formpost");
    const clientId = await registerPublicClient(ctx);
    const { verifier, challenge } = pkce();
    const url = authorizationUrl(ctx, {
      client_id: clientId,
      scope: "openid",
      response_mode: "form_post",
      code_challenge: challenge,
      code_challenge_method: "S256",
    });
    const page = await walk(browser, url);
    if (page.at !== "consent") throw new Error("expected the consent page");
    const decided = (await (await postConsent(ctx, browser, page.url, { accept: true })).json()) as { redirect_uri: string };
    const res = await browser.request(decided.redirect_uri);
    const html = await res.text();
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] ?? "";
    const policy = res.headers.get("content-security-policy") ?? "";
    expect(policy).toContain(`'sha256-${createHash("sha256").update(script).digest("base64")}'`);
    expect(policy).toContain("form-action http: https:");
    expect(html).toContain(`action="${REDIRECT_URI}"`);
    const code = /name="code" value="([^"]+)"/.exec(html)?.[1] ?? "";
    const exchanged = await token(ctx, {
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
    });
    expect(exchanged.status).toBe(200);
  });
});

describe("consent", () => {
  it("is asked once per client and scopes, remembered in a new browser session, and asked again for new scopes", async () => {
    const browser = new Browser();
    const user = await signUp(ctx, browser, "remember");
    const clientId = await registerPublicClient(ctx);
    await authorizeAndExchange(ctx, browser, clientId, { scope: "mcp:read" }, { expectConsent: true });
    await authorizeAndExchange(ctx, browser, clientId, { scope: "mcp:read" }, { expectConsent: false });

    // Another browser of the same user: a new identity session, no provider session; same consent.
    const other = new Browser();
    const signedIn = await sendJson(other, `${ctx.baseUrl}/api/auth/sign-in/email`, { email: user.email, password: PASSWORD });
    expect(signedIn.status).toBe(200);
    await authorizeAndExchange(ctx, other, clientId, { scope: "mcp:read" }, { expectConsent: false });
    const wider = await authorizeAndExchange(ctx, other, clientId, { scope: MCP }, { expectConsent: true });
    expect(wider.scope).toBe(MCP);
  });

  it("grants only the scopes the page accepted, and a refusal sends access_denied to the client", async () => {
    const browser = new Browser();
    await signUp(ctx, browser, "partial");
    const clientId = await registerPublicClient(ctx);
    const { challenge } = pkce();
    const url = authorizationUrl(ctx, { client_id: clientId, scope: MCP, code_challenge: challenge, code_challenge_method: "S256" });
    const page = await walk(browser, url);
    expect(page.at).toBe("consent");
    const denied = await sendJson(browser, `${ctx.baseUrl}/api/auth/oauth2/consent`, {
      accept: false,
      oauth_query: page.url.search.slice(1),
    });
    const back = await walk(browser, ((await denied.json()) as { redirect_uri: string }).redirect_uri);
    expect([back.at, back.url.searchParams.get("error"), back.url.searchParams.get("state")]).toEqual(["client", "access_denied", "s-1"]);

    // The page grants mcp:read alone: the token carries it alone, and mcp:write, declined, is not asked again.
    const { verifier, challenge: second } = pkce();
    const again = await walk(
      browser,
      authorizationUrl(ctx, { client_id: clientId, scope: MCP, code_challenge: second, code_challenge_method: "S256" }),
    );
    expect(again.at).toBe("consent");
    const unrequested = await postConsent(ctx, browser, again.url, { accept: true, scope: "mcp:read openid" });
    expect((await unrequested.json()) as unknown).toMatchObject({ code: "bad_request" });
    const granted = await postConsent(ctx, browser, again.url, { accept: true, scope: "mcp:read" });
    const landed = await walk(browser, ((await granted.json()) as { redirect_uri: string }).redirect_uri);
    const code = landed.url.searchParams.get("code") ?? "";
    const exchanged = await token(ctx, {
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
    });
    expect(exchanged.body.scope).toBe("mcp:read");
    const later = await authorizeAndExchange(ctx, browser, clientId, { scope: MCP }, { expectConsent: false });
    expect(later.scope).toBe("mcp:read");
  });

  it("sends a browser without a session to the web app's sign-in page and back, and follows the signed-in user", async () => {
    const first = await signUp(ctx, new Browser(), "first");
    const second = await signUp(ctx, new Browser(), "second");
    const clientId = await registerPublicClient(ctx);
    const browser = new Browser();
    const { challenge } = pkce();
    const url = authorizationUrl(ctx, { client_id: clientId, scope: "openid", code_challenge: challenge, code_challenge_method: "S256" });
    const signIn = await walk(browser, url);
    if (signIn.at !== "sign-in") throw new Error(`expected the sign-in page, got ${signIn.url.href}`);
    expect(signIn.url.origin).toBe(ORIGIN);
    expect(signIn.callbackURL).toMatch(new RegExp(`^${ctx.baseUrl}/api/auth/oauth2/interaction/[\\w-]+$`));
    // prompt=login wants a sign-in after the request: a session from before it does not do.
    const earlier = new Browser();
    await signUp(ctx, earlier, "earlier");
    const login = await walk(
      earlier,
      authorizationUrl(ctx, {
        client_id: clientId,
        scope: "openid",
        prompt: "login",
        code_challenge: challenge,
        code_challenge_method: "S256",
      }),
    );
    expect([login.at, login.url.searchParams.get("error")]).toEqual(["client", "login_required"]);
    // prompt=none without a session answers the client at once.
    const none = await walk(
      new Browser(),
      authorizationUrl(ctx, {
        client_id: clientId,
        scope: "openid",
        prompt: "none",
        code_challenge: challenge,
        code_challenge_method: "S256",
      }),
    );
    expect([none.at, none.url.searchParams.get("error")]).toEqual(["client", "login_required"]);

    const signInAs = async (email: string) =>
      expect((await sendJson(browser, `${ctx.baseUrl}/api/auth/sign-in/email`, { email, password: PASSWORD })).status).toBe(200);
    await signInAs(first.email);
    expect((await walk(browser, signIn.callbackURL)).at).toBe("consent");
    const asFirst = await authorizeAndExchange(ctx, browser, clientId, { scope: "openid" });
    expect(await subjectOf(asFirst)).toBe(first.id);

    // Signing out of the product ends the provider's session too; another user signing in is that user.
    await sendJson(browser, `${ctx.baseUrl}/api/auth/sign-out`, {});
    expect((await walk(browser, url)).at).toBe("sign-in");
    await signInAs(second.email);
    const asSecond = await authorizeAndExchange(ctx, browser, clientId, { scope: "openid" }, { expectConsent: true });
    expect(await subjectOf(asSecond)).toBe(second.id);
  });
});

async function subjectOf(tokens: { id_token?: string }): Promise<string | undefined> {
  return (await jwtVerify(tokens.id_token ?? "", jwks, { issuer: ctx.baseUrl })).payload.sub;
}

describe("the user's authorized applications", () => {
  it("lists them, and revoking one ends its refresh tokens at once and asks consent again", async () => {
    const owner = new Browser();
    const user = await signUp(ctx, owner, "apps");
    const clientId = await registerPublicClient(ctx, "Listed app");
    const tokens = await authorizeAndExchange(ctx, owner, clientId, { scope: `openid ${MCP}` });
    const list = await owner.request(`${ctx.baseUrl}/api/auth/oauth2/get-consents`, { headers: { origin: ORIGIN } });
    const consents = (await list.json()) as { id: string; clientId: string; userId: string; scopes: string[]; clientName: string }[];
    expect(consents).toHaveLength(1);
    expect(consents[0]).toMatchObject({ clientId, userId: user.id, clientName: "Listed app" });
    expect(consents[0]?.scopes.sort()).toEqual(["mcp:read", "mcp:write", "openid"]);
    const id = consents[0]?.id ?? "";

    // Nobody else reads or revokes it: another user, or the application with its own access token.
    const stranger = new Browser();
    await signUp(ctx, stranger, "stranger");
    expect((await stranger.request(`${ctx.baseUrl}/api/auth/oauth2/get-consent?id=${id}`)).status).toBe(404);
    expect((await sendJson(stranger, `${ctx.baseUrl}/api/auth/oauth2/delete-consent`, { id })).status).toBe(404);
    expect((await stranger.request(`${ctx.baseUrl}/api/auth/oauth2/get-consents`).then((r) => r.json())) as unknown[]).toEqual([]);
    const asApp = await fetch(`${ctx.baseUrl}/api/auth/oauth2/get-consents`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(asApp.status).toBe(401);

    const revoked = await sendJson(owner, `${ctx.baseUrl}/api/auth/oauth2/delete-consent`, { id });
    expect(await revoked.json()).toEqual({ success: true });
    const refused = await token(ctx, { grant_type: "refresh_token", refresh_token: tokens.refresh_token ?? "", client_id: clientId });
    expect(refused.body.error).toBe("invalid_grant");
    expect((await owner.request(`${ctx.baseUrl}/api/auth/oauth2/get-consents`).then((r) => r.json())) as unknown[]).toEqual([]);
    await authorizeAndExchange(ctx, owner, clientId, { scope: "mcp:read" }, { expectConsent: true });
  });
});
