import { createLogger } from "@app/http-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runHousekeeping } from "../src/housekeeping.js";
import { OAUTH_REGISTRATION_LIMIT } from "../src/middleware/rate-limits.js";
import { DEFAULT_CLIENT_LIMITS } from "../src/oauth-provider/store.js";
import {
  authorizationUrl,
  authorize,
  Browser,
  type OAuthKit,
  pkce,
  postForm,
  REDIRECT_URI,
  register,
  signUp,
  startIdentity,
  token,
} from "./oauth-kit.js";

/** Housekeeping's logger in this file: quiet. */
const silent = createLogger({ name: "oauth-test", level: "silent" });

// Dynamic client registration (RFC 7591, open) and what the authorization server stores: clients
// within their caps (per registrant and overall, under concurrency), the per-IP limit, tokens
// keyed by an HMAC so the table holds no usable token or client secret, and the purge.

let ctx: OAuthKit;

beforeAll(async () => {
  ctx = await startIdentity();
});
afterAll(async () => {
  await ctx?.close();
});

const registerRaw = (target: OAuthKit, metadata: Record<string, unknown>) =>
  fetch(`${target.baseUrl}/api/auth/oauth2/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: [REDIRECT_URI], ...metadata }),
  });

describe("dynamic client registration", () => {
  it("registers public and confidential clients and refuses grants and algorithms the server does not offer", async () => {
    const pub = await register(ctx, {
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      scope: "mcp:read mcp:write",
    });
    expect(pub).toMatchObject({ token_endpoint_auth_method: "none", id_token_signed_response_alg: "EdDSA" });
    expect(pub.client_secret).toBeUndefined();
    const confidential = await register(ctx, { client_name: "Server app" });
    expect(confidential).toMatchObject({ token_endpoint_auth_method: "client_secret_basic" });
    expect(String(confidential.client_secret).length).toBeGreaterThan(40);

    const refused = [
      { grant_types: ["implicit"], response_types: ["id_token"] },
      { grant_types: ["client_credentials"], response_types: [] },
      { grant_types: ["password"] },
      { response_types: ["token"] },
      { id_token_signed_response_alg: "RS256" },
      { scope: "openid admin" },
      { redirect_uris: ["http://127.0.0.1:9/callback#fragment"] },
    ];
    for (const metadata of refused) {
      const res = await registerRaw(ctx, metadata);
      expect(res.status, JSON.stringify(metadata)).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/^invalid_(client_metadata|redirect_uri)$/);
    }
  });

  it("stores no usable token or client secret: rows are keyed by HMACs and secrets sealed", async () => {
    const client = await register(ctx, { grant_types: ["authorization_code", "refresh_token"], client_name: "Sealed" });
    const browser = new Browser();
    await signUp(ctx, browser, "stored");
    const { verifier, challenge } = pkce();
    const callback = await authorize(
      ctx,
      browser,
      authorizationUrl(ctx, {
        client_id: client.client_id,
        scope: "openid email",
        code_challenge: challenge,
        code_challenge_method: "S256",
      }),
    );
    const code = callback.searchParams.get("code") ?? "";
    const basic = `Basic ${Buffer.from(`${client.client_id}:${String(client.client_secret)}`).toString("base64")}`;
    const res = await postForm(
      `${ctx.baseUrl}/api/auth/oauth2/token`,
      { grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier },
      { authorization: basic },
    );
    const tokens = (await res.json()) as { access_token: string; refresh_token: string };
    expect(res.status).toBe(200);

    const rows = await ctx.kit.db.prisma.$queryRaw<{ kind: string; id: string; text: string }[]>`
SELECT "kind", "id", "payload"::text AS "text" FROM "oauth_payload"`;
    const secrets = [
      code,
      tokens.access_token,
      tokens.refresh_token,
      String(client.registration_access_token),
      String(client.client_secret),
    ];
    for (const secret of secrets) {
      expect(rows.filter((row) => row.id === secret || row.text.includes(secret)).map((row) => row.kind)).toEqual([]);
    }
    const kinds = new Set(rows.map((row) => row.kind));
    for (const kind of ["AuthorizationCode", "AccessToken", "RefreshToken", "RegistrationAccessToken", "Grant", "Client", "Session"]) {
      expect(kinds.has(kind), kind).toBe(true);
    }
    // The client still authenticates with its secret (opened from the sealed copy) on a refresh.
    const refreshed = await postForm(
      `${ctx.baseUrl}/api/auth/oauth2/token`,
      { grant_type: "refresh_token", refresh_token: tokens.refresh_token },
      { authorization: basic },
    );
    expect(refreshed.status).toBe(200);
  });

  it("caps the clients one address holds, exactly under concurrency, and the purge frees unused ones", async () => {
    const first = await register(ctx, { token_endpoint_auth_method: "none", client_name: "Capped" });
    const prisma = ctx.kit.db.prisma;
    const mine = async () =>
      (
        await prisma.$queryRaw<{ n: number }[]>`
SELECT count(*)::int AS "n" FROM "oauth_payload" WHERE "kind" = 'Client' AND "payload"->>'x_registrant' = (
  SELECT "payload"->>'x_registrant' FROM "oauth_payload" WHERE "kind" = 'Client' AND "id" = ${first.client_id})`
      )[0]?.n ?? 0;
    // Copies of that client, with its registrant, up to two short of the cap.
    const fill = DEFAULT_CLIENT_LIMITS.maxClientsPerRegistrant - 2 - (await mine());
    await prisma.$executeRaw`
INSERT INTO "oauth_payload" ("kind", "id", "payload", "client_id")
SELECT 'Client', 'filler-' || g, "payload", 'filler-' || g FROM "oauth_payload", generate_series(1, ${fill}::int) AS g
WHERE "kind" = 'Client' AND "id" = ${first.client_id}`;
    const held = await mine();
    const room = DEFAULT_CLIENT_LIMITS.maxClientsPerRegistrant - held;
    const answers = await Promise.all(Array.from({ length: room + 3 }, () => registerRaw(ctx, { token_endpoint_auth_method: "none" })));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(room);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3);
    expect(await mine()).toBe(DEFAULT_CLIENT_LIMITS.maxClientsPerRegistrant);

    // A day on, the fillers (no grant) are purged; a client someone authorized stays.
    await prisma.$executeRaw`UPDATE "oauth_payload" SET "created_at" = now() - interval '2 days' WHERE "kind" = 'Client'`;
    // Through the server's housekeeping round, as server.ts runs it with IdentityApp.oauth.
    const round = await runHousekeeping(ctx.kit.service, { logger: silent, keyRotationMs: 0, oauth: ctx.kit.oauth });
    expect(round.purgedOAuth).toBeGreaterThanOrEqual(fill);
    const kept = await prisma.oAuthPayload.count({ where: { kind: "Client" } });
    const granted = await prisma.oAuthPayload.count({ where: { kind: "Grant" } });
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(granted);
    expect((await registerRaw(ctx, { token_endpoint_auth_method: "none" })).status).toBe(201);
  });

  it("caps the clients overall", async () => {
    const prisma = ctx.kit.db.prisma;
    const existing = await prisma.oAuthPayload.count({ where: { kind: "Client" } });
    await prisma.$executeRaw`
INSERT INTO "oauth_payload" ("kind", "id", "payload")
SELECT 'Client', 'bulk-' || g, '{}'::jsonb FROM generate_series(1, ${DEFAULT_CLIENT_LIMITS.maxClients - existing}::int) AS g`;
    const res = await registerRaw(ctx, { token_endpoint_auth_method: "none" });
    expect(res.status).toBe(429);
    expect(((await res.json()) as { error_description: string }).error_description).toContain("as many clients as it allows");
    await prisma.$executeRaw`DELETE FROM "oauth_payload" WHERE "id" LIKE 'bulk-%'`;
  });
});

describe("housekeeping", () => {
  it("purges expired tokens, codes and grants", async () => {
    const prisma = ctx.kit.db.prisma;
    const before = await prisma.oAuthPayload.count({ where: { kind: { in: ["AccessToken", "RefreshToken", "AuthorizationCode"] } } });
    expect(before).toBeGreaterThan(0);
    await prisma.$executeRaw`UPDATE "oauth_payload" SET "expires_at" = now() - interval '1 minute' WHERE "expires_at" IS NOT NULL`;
    expect(await ctx.kit.oauth.purgeExpired()).toBeGreaterThanOrEqual(before);
    expect(await prisma.oAuthPayload.count({ where: { expiresAt: { not: null } } })).toBe(0);
  });
});

describe("the registration limit per address", () => {
  it("answers 429 rate_limited with Retry-After past OAUTH_REGISTRATION_LIMIT", async () => {
    const own = await startIdentity();
    try {
      for (let i = 0; i < OAUTH_REGISTRATION_LIMIT.max; i++)
        expect((await registerRaw(own, { token_endpoint_auth_method: "none" })).status).toBe(201);
      const refused = await registerRaw(own, { token_endpoint_auth_method: "none" });
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { code: string }).code).toBe("rate_limited");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      // Other routes of the provider are not counted.
      expect((await token(own, { grant_type: "refresh_token", refresh_token: "x", client_id: "y" })).status).toBe(401);
    } finally {
      await own.close();
    }
  });
});
