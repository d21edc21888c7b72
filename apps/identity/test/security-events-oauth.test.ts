import { createDb } from "@app/db";
import type { TestDatabase } from "@app/db/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  authorizationUrl,
  authorizeAndExchange,
  Browser,
  type OAuthKit,
  pkce,
  postConsent,
  registerPublicClient,
  sendJson,
  signUp,
  startIdentity,
  walk,
} from "./oauth-kit.js";

// The authorization server's consents in the security event log: granted (the client and the
// scopes the page accepted) in the transaction that saves oidc-provider's Grant, and revoked
// with the grants it deletes. Real PostgreSQL, identity on a free port.
let ctx: OAuthKit;

beforeAll(async () => {
  ctx = await startIdentity();
});
afterAll(async () => {
  await ctx?.close();
});

const eventsOf = (userId: string, type: string) =>
  ctx.kit.db.prisma.authEvent.findMany({ where: { userId, type }, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
const grantsOf = (userId: string) => ctx.kit.db.prisma.oAuthPayload.count({ where: { kind: "Grant", accountId: userId } });

/** Walks an authorization request for `scope` to its consent page. */
async function consentPage(browser: Browser, clientId: string, scope: string): Promise<URL> {
  const url = authorizationUrl(ctx, { client_id: clientId, scope, code_challenge: pkce().challenge, code_challenge_method: "S256" });
  const stop = await walk(browser, url);
  if (stop.at !== "consent") throw new Error(`stopped at ${stop.at}`);
  return stop.url;
}

describe("OAuth consents in the security event log", () => {
  it("records oauth_consent_granted with the client and the scopes accepted, and nothing for a refusal", async () => {
    const browser = new Browser();
    const user = await signUp(ctx, browser, "consents");
    const clientId = await registerPublicClient(ctx, "Notes");
    await authorizeAndExchange(ctx, browser, clientId, { scope: "openid mcp:read" }, { expectConsent: true });
    const [granted] = await eventsOf(user.id, "oauth_consent_granted");
    expect(granted).toMatchObject({ outcome: "success", actorId: null, detail: { clientId, scopes: "openid mcp:read" } });
    expect(granted?.ip).toBeTruthy();

    // Part of what was asked: the event names what the page accepted.
    const partial = await consentPage(browser, clientId, "mcp:read mcp:write");
    expect((await postConsent(ctx, browser, partial, { accept: true, scope: "mcp:write" })).status).toBe(200);
    const third = await registerPublicClient(ctx, "Refused");
    const page = await consentPage(browser, third, "mcp:read");
    expect((await postConsent(ctx, browser, page, { accept: false })).status).toBe(200);
    expect((await eventsOf(user.id, "oauth_consent_granted")).map((e) => e.detail)).toEqual([
      { clientId, scopes: "openid mcp:read" },
      { clientId, scopes: "mcp:write" },
    ]);
  });

  it("saves no grant when its event cannot be written: the consent and its record commit together", async () => {
    const browser = new Browser();
    const user = await signUp(ctx, browser, "atomic");
    const clientId = await registerPublicClient(ctx, "Atomic");
    const page = await consentPage(browser, clientId, "mcp:read");
    const admin = createDb((ctx.kit as unknown as { database: TestDatabase }).database.url, { max: 1 });
    try {
      // The database refuses this user's consent events, as a failing disk or a lost connection would.
      await admin.pool.query(`CREATE FUNCTION refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN IF NEW.user_id = '${user.id}' AND NEW.type = 'oauth_consent_granted' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`);
      await admin.pool.query(`CREATE TRIGGER refuse_event BEFORE INSERT ON auth_event FOR EACH ROW EXECUTE FUNCTION refuse_event()`);
      expect((await postConsent(ctx, browser, page, { accept: true })).status).toBe(500);
      expect(await grantsOf(user.id)).toBe(0);
    } finally {
      await admin.pool.query("DROP TRIGGER IF EXISTS refuse_event ON auth_event; DROP FUNCTION IF EXISTS refuse_event()");
      await admin.close();
    }
    expect(await eventsOf(user.id, "oauth_consent_granted")).toEqual([]);
  });

  it("records oauth_consent_revoked with the client and every scope its grants held", async () => {
    const browser = new Browser();
    const user = await signUp(ctx, browser, "revokes");
    const clientId = await registerPublicClient(ctx, "Revoked");
    await authorizeAndExchange(ctx, browser, clientId, { scope: "mcp:read" }, { expectConsent: true });
    await authorizeAndExchange(ctx, browser, clientId, { scope: "openid mcp:read" }, { expectConsent: true });
    const consents = (await (await browser.request(`${ctx.baseUrl}/api/auth/oauth2/get-consents`)).json()) as { id: string }[];
    expect(consents.length).toBeGreaterThan(0);
    const stranger = new Browser();
    await signUp(ctx, stranger, "stranger");
    expect((await sendJson(stranger, `${ctx.baseUrl}/api/auth/oauth2/delete-consent`, { id: consents[0]?.id })).status).toBe(404);
    expect((await sendJson(browser, `${ctx.baseUrl}/api/auth/oauth2/delete-consent`, { id: consents[0]?.id })).status).toBe(200);
    const [revoked] = await eventsOf(user.id, "oauth_consent_revoked");
    expect(revoked?.detail).toEqual({ clientId, scopes: expect.any(String) });
    const scopes = String((revoked?.detail as { scopes?: string } | undefined)?.scopes ?? "")
      .split(" ")
      .sort();
    expect(scopes).toEqual(["mcp:read", "openid"]);
    expect(await grantsOf(user.id)).toBe(0);
    // Nothing is recorded for the stranger's refused attempt.
    expect((await ctx.kit.db.prisma.authEvent.findMany({ where: { type: "oauth_consent_revoked" } })).length).toBe(1);
  });
});
