import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import * as client from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorize, Browser, type OAuthKit, REDIRECT_URI, signUp, startIdentity } from "./oauth-kit.js";

// A third-party relying party on panva's openid-client, unchanged, against identity as its OpenID
// provider: discovery, dynamic registration, PKCE, sign-in with the identity session cookie, the
// consent decision, the code exchange, an ID token verified against /api/auth/jwks, and userinfo.

let ctx: OAuthKit;

beforeAll(async () => {
  ctx = await startIdentity();
});
afterAll(async () => {
  await ctx?.close();
});

const insecure = { execute: [client.allowInsecureRequests] };

describe("identity as an OpenID provider for a relying party on openid-client", () => {
  it("discovers, registers, signs a user in with PKCE and gets a verified ID token and userinfo", async () => {
    const config = await client.dynamicClientRegistration(
      new URL(ctx.baseUrl),
      {
        redirect_uris: [REDIRECT_URI],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        client_name: "Relying Party",
        token_endpoint_auth_method: "client_secret_basic",
      },
      undefined,
      insecure,
    );
    // The ID token's signature is checked against the advertised jwks_uri, not only trusted over TLS.
    client.enableNonRepudiationChecks(config);
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(ctx.baseUrl);
    expect(metadata.jwks_uri).toBe(`${ctx.baseUrl}/api/auth/jwks`);
    expect(metadata.authorization_endpoint).toBe(`${ctx.baseUrl}/api/auth/oauth2/authorize`);
    expect(metadata.id_token_signing_alg_values_supported).toEqual(["EdDSA"]);
    expect(metadata.code_challenge_methods_supported).toEqual(["S256"]);
    expect(metadata.response_types_supported).toEqual(["code"]);
    expect(metadata.scopes_supported).toEqual(
      expect.arrayContaining(["openid", "profile", "email", "offline_access", "mcp:read", "mcp:write"]),
    );

    const browser = new Browser();
    const user = await signUp(ctx, browser, "rp");
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: "openid profile email",
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
      nonce,
    });
    const callback = await authorize(ctx, browser, url, { expectConsent: true });
    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    expect(claims?.sub).toBe(user.id);
    expect(tokens.refresh_token).toBeTruthy();

    const idToken = String(tokens.id_token);
    const jwks = createRemoteJWKSet(new URL(`${ctx.baseUrl}/api/auth/jwks`));
    const verified = await jwtVerify(idToken, jwks, { issuer: ctx.baseUrl, audience: config.clientMetadata().client_id });
    expect(decodeProtectedHeader(idToken).alg).toBe("EdDSA");
    expect(verified.payload).toMatchObject({ sub: user.id, nonce });

    const info = await client.fetchUserInfo(config, tokens.access_token, user.id);
    expect(info).toMatchObject({ sub: user.id, email: user.email, email_verified: false, name: expect.any(String) });
  });
});
