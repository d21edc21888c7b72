import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { identityKit, ORIGIN } from "./kit.js";
import { Browser, providerStack, type TestProvider } from "./oidc-kit.js";
import { AGENT, eventsOf, expectFromRequest, webhooks } from "./security-events-kit.js";

// Provider sign-in through a real OpenID Provider (oidc-provider) and identity listening on a
// loopback port: a new user's sign-up and sign-in, and a refused callback, each with its event.

let baseUrl: string;
let provider: TestProvider;
let kit: Awaited<ReturnType<typeof identityKit>>;
let stop: (() => Promise<void>) | undefined;
let n = 0;

beforeAll(async () => {
  ({ baseUrl, provider, kit, close: stop } = await providerStack((env) => identityKit({ env })));
});
afterAll(() => stop?.());

/** Runs a provider sign-in as `email` up to identity's callback, calls it with the tests' user agent, and returns where it sends the browser. */
async function providerSignIn(email: string, emailVerified = true): Promise<URL> {
  const browser = new Browser();
  provider.loginAs({ sub: `se-sub-${++n}-${Date.now()}`, email, email_verified: emailVerified, name: "Provider User" });
  const started = await browser.request(`${baseUrl}/api/auth/sign-in/social`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN },
    body: JSON.stringify({ provider: "local", callbackURL: `${ORIGIN}/home`, errorCallbackURL: `${ORIGIN}/sign-in` }),
  });
  const { url } = (await started.json()) as { url: string };
  const callback = await browser.follow(url, (next) => next.href.startsWith(`${baseUrl}/api/auth/callback/`));
  const res = await browser.request(callback, { headers: { "user-agent": AGENT } });
  expect(res.status).toBe(302);
  return new URL(res.headers.get("location") ?? "");
}

describe("provider sign-in", () => {
  it("a new user: sign_up and sign_in by provider, with user.created and session.created", async () => {
    const email = `se-provider-${++n}-${Date.now()}@example.com`;
    const landed = await providerSignIn(email);
    expect(landed.searchParams.get("error")).toBeNull();
    const user = await kit.db.prisma.user.findUniqueOrThrow({ where: { email } });
    const events = await eventsOf(kit.db.prisma, user.id);
    expect(events.map((e) => [e.type, e.method])).toEqual([
      ["sign_up", "provider"],
      ["sign_in", "provider"],
    ]);
    for (const event of events) expectFromRequest(event);
    expect(await webhooks(kit.db.prisma, "user.created", { id: user.id })).toEqual([
      expect.objectContaining({ email, emailVerified: true }),
    ]);
    expect(await webhooks(kit.db.prisma, "session.created", { userId: user.id })).toHaveLength(1);
  });

  it("a refused callback is a failed sign-in with its error code and provider, naming nobody and storing no address", async () => {
    const since = new Date();
    const email = `se-unverified-${++n}-${Date.now()}@example.com`;
    const landed = await providerSignIn(email, false);
    expect(landed.searchParams.get("error")).toBe("email_not_verified");
    const failed = (await eventsOf(kit.db.prisma, null, ["sign_in_failed"])).filter((e) => e.createdAt >= since);
    expect(failed).toHaveLength(1);
    expectFromRequest(failed[0] as (typeof failed)[number], "failure");
    expect(failed[0]).toMatchObject({ method: "provider", detail: { reason: "email_not_verified", provider: "local" } });
    expect(JSON.stringify(failed)).not.toContain(email);
    expect(await kit.db.prisma.user.count({ where: { email } })).toBe(0);
  });
});
