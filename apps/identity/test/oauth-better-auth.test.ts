import { oauthProviderClient } from "@better-auth/oauth-provider/client";
import { createAuthClient } from "better-auth/client";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { authorizationUrl, Browser, type OAuthKit, pkce, registerPublicClient, signUp, startIdentity, walk } from "./oauth-kit.js";

// better-auth 1.7's `oauthProviderClient`, unchanged, as the web app's consent page uses it: it
// reads the signed query from the page's URL and sends it as `oauth_query`; identity answers where
// the browser goes next, which better-auth's redirect plugin navigates to. In Node, a stand-in
// `window` holds the page's location, and a cookie jar (test/oidc-kit.ts) is the browser.

let ctx: OAuthKit;

beforeAll(async () => {
  ctx = await startIdentity();
});
afterAll(async () => {
  await ctx?.close();
});

type Page = { location: { search: string; href: string } };
const scope = globalThis as { window?: Page };
afterEach(() => {
  delete scope.window;
});

/** better-auth's client with the oauth-provider plugin, its requests in `browser`'s cookie jar. */
function authClient(browser: Browser) {
  const customFetchImpl = (input: string | URL | Request, init?: RequestInit) =>
    browser.request(input instanceof Request ? input.url : input, init);
  return createAuthClient({ baseURL: ctx.baseUrl, plugins: [oauthProviderClient()], fetchOptions: { customFetchImpl } });
}

/** A signed-in browser at the consent page of a new public client's authorization request. */
async function atConsentPage() {
  const browser = new Browser();
  await signUp(ctx, browser, "ba");
  const clientId = await registerPublicClient(ctx, "Better Auth app");
  const { challenge } = pkce();
  const page = await walk(
    browser,
    authorizationUrl(ctx, { client_id: clientId, scope: "openid mcp:read", code_challenge: challenge, code_challenge_method: "S256" }),
  );
  if (page.at !== "consent") throw new Error(`expected the consent page, got ${page.url.href}`);
  return { browser, clientId, page: page.url };
}

describe("better-auth's oauthProviderClient on the consent page", () => {
  it("sends the page's signed query, and its redirect plugin goes where identity answers: on to the client with a code", async () => {
    const { browser, clientId, page } = await atConsentPage();
    const client = authClient(browser);
    const facts = await client.oauth2.publicClient({ query: { client_id: clientId } });
    expect(facts.data).toMatchObject({ client_id: clientId, client_name: "Better Auth app" });

    scope.window = { location: { search: page.search, href: page.href } };
    const { data, error } = await client.oauth2.consent({ accept: true });
    expect(error).toBeNull();
    const answer = data as { redirect: boolean; url: string; redirect_uri: string };
    expect(answer.redirect).toBe(true);
    expect(answer.url).toBe(answer.redirect_uri);
    expect(scope.window.location.href).toBe(answer.redirect_uri);
    const landed = await walk(browser, answer.redirect_uri);
    expect(landed.at).toBe("client");
    expect(landed.url.searchParams.get("code")).toBeTruthy();

    const consents = await client.oauth2.getConsents();
    const listed = consents.data as unknown as { id: string; clientId: string; scopes: string[] }[];
    expect(listed.map((c) => c.clientId)).toEqual([clientId]);
    const one = await client.oauth2.getConsent({ query: { id: listed[0]?.id ?? "" } });
    expect((one.data as unknown as { scopes: string[] }).scopes.sort()).toEqual(["mcp:read", "openid"]);
    const removed = await client.oauth2.deleteConsent({ id: listed[0]?.id ?? "" });
    expect(removed.error).toBeNull();
    expect((await client.oauth2.getConsents()).data).toEqual([]);
  });

  it("refuses a page whose query was altered: error.code invalid_signature, and no navigation", async () => {
    const { browser, page } = await atConsentPage();
    const client = authClient(browser);
    const forged = new URLSearchParams(page.search);
    forged.set("scope", "openid mcp:read mcp:write");
    scope.window = { location: { search: `?${forged}`, href: page.href } };
    const { data, error } = await client.oauth2.consent({ accept: true });
    expect(data).toBeNull();
    expect([error?.status, error?.code]).toEqual([401, "invalid_signature"]);
    expect(scope.window.location.href).toBe(page.href);
  });
});
