import { createHash, randomBytes } from "node:crypto";
import { expect } from "vitest";
import { ORIGIN } from "../kit.js";
import type { ConformanceContext } from "./context.js";

const REDIRECT_URI = "http://127.0.0.1:9/callback";

/**
 * Answers every route of the authorization server (route-conformance.test.ts): both discovery
 * documents, a public client's registration and its read, an authorization request walked through
 * the interaction and consent steps to the client's redirect URI, the public client facts, the code
 * exchange, userinfo (GET and POST), the user's authorized applications (list, one, revoke), a
 * refresh and the revocation of its token.
 */
export async function drive(ctx: ConformanceContext): Promise<void> {
  const { baseUrl } = ctx;
  const anonymous = ctx.client();
  const discovery = await ctx.expectJson(await anonymous.get("/.well-known/openid-configuration"));
  expect(discovery.issuer).toBe(baseUrl);
  expect((await ctx.expectJson(await anonymous.get("/.well-known/oauth-authorization-server"))).issuer).toBe(baseUrl);

  const registered = await fetch(`${baseUrl}/api/auth/oauth2/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      redirect_uris: [REDIRECT_URI],
      grant_types: ["authorization_code", "refresh_token"],
      token_endpoint_auth_method: "none",
      client_name: "Conformance",
    }),
  });
  const clientInfo = await ctx.expectJson(registered, 201);
  const clientId = String(clientInfo.client_id);
  const read = await fetch(String(clientInfo.registration_client_uri), {
    headers: { authorization: `Bearer ${String(clientInfo.registration_access_token)}` },
  });
  expect((await ctx.expectJson(read)).client_id).toBe(clientId);

  const owner = ctx.client();
  await ctx.expectJson(await owner.post("/api/auth/sign-up/email", { email: ctx.fresh("oauth"), password: ctx.password, name: "OAuth" }));
  const verifier = randomBytes(32).toString("base64url");
  const authorize = new URL(`${baseUrl}/api/auth/oauth2/authorize`);
  for (const [k, v] of Object.entries({
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    response_type: "code",
    scope: "openid email",
    state: "conformance",
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
  })) {
    authorize.searchParams.set(k, v);
  }
  const page = await owner.browser.follow(authorize, (next) => next.origin === ORIGIN);
  expect(page.pathname).toBe("/oauth/consent");
  const facts = await ctx.expectJson(await owner.get(`/api/auth/oauth2/public-client?client_id=${clientId}`));
  expect(facts).toEqual({ client_id: clientId, client_name: "Conformance" });
  const decided = await ctx.expectJson(await owner.post("/api/auth/oauth2/consent", { accept: true, oauth_query: page.search.slice(1) }));
  const callback = await owner.browser.follow(String(decided.redirect_uri), (next) => next.href.startsWith(REDIRECT_URI));
  const code = callback.searchParams.get("code") ?? "";

  const form = (fields: Record<string, string>) => ({
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
  const tokens = await ctx.expectJson(
    await fetch(
      `${baseUrl}/api/auth/oauth2/token`,
      form({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, client_id: clientId, code_verifier: verifier }),
    ),
  );
  const bearer = { authorization: `Bearer ${String(tokens.access_token)}` };
  expect((await ctx.expectJson(await fetch(`${baseUrl}/api/auth/oauth2/userinfo`, { headers: bearer }))).email).toBeTruthy();
  expect((await ctx.expectJson(await fetch(`${baseUrl}/api/auth/oauth2/userinfo`, { method: "POST", headers: bearer }))).sub).toBeTruthy();

  const consents = (await ctx.expectJson(await owner.get("/api/auth/oauth2/get-consents"))) as unknown as {
    id: string;
    clientId: string;
  }[];
  expect(consents.map((c) => c.clientId)).toEqual([clientId]);
  const id = consents[0]?.id ?? "";
  expect((await ctx.expectJson(await owner.get(`/api/auth/oauth2/get-consent?id=${id}`))).clientId).toBe(clientId);

  const refreshed = await ctx.expectJson(
    await fetch(
      `${baseUrl}/api/auth/oauth2/token`,
      form({ grant_type: "refresh_token", refresh_token: String(tokens.refresh_token), client_id: clientId }),
    ),
  );
  const revoked = await fetch(
    `${baseUrl}/api/auth/oauth2/revoke`,
    form({ token: String(refreshed.refresh_token), token_type_hint: "refresh_token", client_id: clientId }),
  );
  expect(revoked.status).toBe(200);

  // A second authorization, then the user revokes the application.
  const again = await owner.browser.follow(authorize, (next) => next.origin === ORIGIN || next.href.startsWith(REDIRECT_URI));
  const second = await ctx.expectJson(await owner.post("/api/auth/oauth2/consent", { accept: true, oauth_query: again.search.slice(1) }));
  await owner.browser.follow(String(second.redirect_uri), (next) => next.href.startsWith(REDIRECT_URI));
  const [latest] = (await ctx.expectJson(await owner.get("/api/auth/oauth2/get-consents"))) as unknown as { id: string }[];
  expect(await ctx.expectJson(await owner.post("/api/auth/oauth2/delete-consent", { id: latest?.id }))).toEqual({ success: true });
}
