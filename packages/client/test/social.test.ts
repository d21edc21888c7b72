import { randomBytes } from "node:crypto";
import { createTestDatabase, type TestDatabase } from "@app/db/testing";
import { launchStack, type RunningStack } from "@app/stack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, createClient, memoryStorage } from "../src/index.js";
import { cookieFetch } from "./helpers.js";

// The SDK's provider sign-in methods against a real identity configured with the stack's local
// OpenID Provider (tools/stack/src/local-idp.ts); the whole flow is driven in
// tools/stack/src/local-idp.test.ts and tools/e2e/src/provider-sign-in.test.ts.
let database: TestDatabase;
let stack: RunningStack;
beforeAll(async () => {
  database = await createTestDatabase();
  stack = await launchStack({
    databaseUrl: database.url,
    port: 0,
    authSecret: randomBytes(32).toString("base64url"),
    dataEncryptionKey: randomBytes(32).toString("base64url"),
    env: { LOG_LEVEL: "warn", UPLOAD_DIR: `/tmp/client-social-${process.pid}` },
    localIdp: { port: 0 },
    onLine: () => undefined,
  });
}, 120_000);
afterAll(async () => {
  await stack?.stop();
  await database?.drop();
});

describe("auth.providers() and auth.signInSocial()", () => {
  it("lists the configured providers and returns the provider's authorization URL, with identity's flow cookie set", async () => {
    const jar = cookieFetch();
    const client = createClient({ baseUrl: stack.baseUrl, storage: memoryStorage(), fetch: jar.fetch });
    expect(await client.auth.providers()).toContainEqual({ id: "local", name: "Local IdP" });
    const url = new URL(
      await client.auth.signInSocial({
        provider: "local",
        callbackURL: `${stack.baseUrl}/?signedIn=local`,
        errorCallbackURL: `${stack.baseUrl}/?authError=1`,
      }),
    );
    expect(url.origin).toBe(stack.localIdp?.issuer);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect([...jar.cookies.keys()].some((name) => name.endsWith(".oauth_flow"))).toBe(true);
    expect(client.auth.token()).toBeNull();
  });

  it("rejects an unknown provider (404) and a callback URL off the service's origins (403) with coded errors", async () => {
    const client = createClient({ baseUrl: stack.baseUrl, storage: memoryStorage(), fetch: cookieFetch().fetch });
    const unknown = await client.auth.signInSocial({ provider: "nope", callbackURL: `${stack.baseUrl}/` }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(ApiError);
    expect((unknown as ApiError).status).toBe(404);
    const offsite = await client.auth.signInSocial({ provider: "local", callbackURL: "https://evil.example/" }).catch((e: unknown) => e);
    expect((offsite as ApiError).status).toBe(403);
    expect((offsite as ApiError).code).toBe("forbidden");
  });
});
