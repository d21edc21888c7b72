import path from "node:path";
import { DEFAULT_CACHE_MAX_AGE_MS, DEFAULT_COOLDOWN_MS } from "@app/auth-verify";
import { DEFAULT_JWKS_CACHE_MAX_AGE_MS, DEFAULT_JWKS_COOLDOWN_MS } from "@app/http-kit";
import { describe, expect, it } from "vitest";
import { testConfig } from "./config.js";

describe("api config", () => {
  it("derives identity URLs, issuer/audience and origins from BASE_URL and IDENTITY_URL", () => {
    const c = testConfig({ DATABASE_URL: "postgresql://x/y", BASE_URL: "https://app.example.com/", IDENTITY_URL: "http://10.0.0.2:3001/" });
    expect(c.jwksUrl).toBe("http://10.0.0.2:3001/api/auth/jwks");
    expect(c.getSessionUrl).toBe("http://10.0.0.2:3001/api/auth/get-session");
    expect([c.issuer, c.audience]).toEqual(["https://app.example.com", "https://app.example.com"]);
    expect(c.corsOrigins).toEqual(["http://localhost:5173", "https://app.example.com"]);
    expect(c.port).toBe(3002);
    expect(c.uploadDir).toBe(path.resolve(".data/uploads"));
    expect(c.uploadMaxBytes).toBe(10 * 1024 * 1024);
    expect(c.openai).toBeUndefined();
    expect(c.verifyCache).toBe(true);
    expect(c.mcpRedirectUri).toBe("https://app.example.com/api/mcp-oauth/callback");
  });

  it("normalises CORS origins, refuses wildcards, and reads TRUST_PROXY like identity does", () => {
    const c = testConfig({
      DATABASE_URL: "postgresql://x/y",
      CORS_ORIGINS: "https://app.example.com/, http://localhost:5173",
      TRUST_PROXY: "true",
    });
    expect(c.corsOrigins).toContain("https://app.example.com");
    expect(c.trustProxy).toBe(true);
    expect(testConfig({ DATABASE_URL: "postgresql://x/y", TRUST_PROXY: "2" }).trustProxy).toBe(2);
    expect(() => testConfig({ DATABASE_URL: "postgresql://x/y", CORS_ORIGINS: "*" })).toThrow();
  });

  it("requires a long DATA_ENCRYPTION_KEY in production", () => {
    expect(() => testConfig({ DATABASE_URL: "postgresql://x/y", NODE_ENV: "production", DATA_ENCRYPTION_KEY: "short" })).toThrow(
      /DATA_ENCRYPTION_KEY/,
    );
    expect(() =>
      testConfig({
        DATABASE_URL: "postgresql://x/y",
        NODE_ENV: "production",
        DATA_ENCRYPTION_KEY: "x".repeat(32),
        BASE_URL: "https://app.example.com",
      }),
    ).not.toThrow();
  });

  it("allows private MCP OAuth URLs only outside production", () => {
    expect(testConfig({ DATABASE_URL: "postgresql://x/y" }).mcpAllowPrivateUrls).toBe(false);
    expect(testConfig({ DATABASE_URL: "postgresql://x/y", MCP_ALLOW_PRIVATE_URLS: "true" }).mcpAllowPrivateUrls).toBe(true);
    expect(() =>
      testConfig({
        DATABASE_URL: "postgresql://x/y",
        NODE_ENV: "production",
        DATA_ENCRYPTION_KEY: "x".repeat(32),
        BASE_URL: "https://app.example.com",
        MCP_ALLOW_PRIVATE_URLS: "true",
      }),
    ).toThrow(/MCP_ALLOW_PRIVATE_URLS/);
  });

  it("reads MCP_ALLOW_PRIVATE_ORIGINS as origins, refuses anything else, and refuses it in production", () => {
    const db = { DATABASE_URL: "postgresql://x/y" };
    expect(testConfig(db).mcpAllowPrivateOrigins).toEqual([]);
    expect(testConfig({ ...db, MCP_ALLOW_PRIVATE_ORIGINS: "http://127.0.0.1:3920, http://LOCALHOST:80" }).mcpAllowPrivateOrigins).toEqual([
      "http://127.0.0.1:3920",
      "http://localhost",
    ]);
    expect(() => testConfig({ ...db, MCP_ALLOW_PRIVATE_ORIGINS: "http://127.0.0.1:3920/mcp" })).toThrow(/MCP_ALLOW_PRIVATE_ORIGINS/);
    expect(() => testConfig({ ...db, MCP_ALLOW_PRIVATE_ORIGINS: "127.0.0.1:3920" })).toThrow(/MCP_ALLOW_PRIVATE_ORIGINS/);
    expect(() =>
      testConfig({
        ...db,
        NODE_ENV: "production",
        DATA_ENCRYPTION_KEY: "x".repeat(32),
        BASE_URL: "https://app.example.com",
        MCP_ALLOW_PRIVATE_ORIGINS: "http://127.0.0.1:3920",
      }),
    ).toThrow(/MCP_ALLOW_PRIVATE_ORIGINS/);
  });

  describe("settings shared with identity (packages/http-kit/src/settings/token.ts)", () => {
    const db = { DATABASE_URL: "postgresql://x/y" };

    it("requires BASE_URL in production, like identity", () => {
      expect(() => testConfig({ ...db, NODE_ENV: "production", DATA_ENCRYPTION_KEY: "x".repeat(32) })).toThrow(
        /BASE_URL is required in production/,
      );
    });

    it("reads JWT_ISSUER/JWT_AUDIENCE like identity: trimmed, never empty, BASE_URL otherwise", () => {
      const c = testConfig({ ...db, BASE_URL: "https://app.example.com", JWT_ISSUER: " urn:issuer ", JWT_AUDIENCE: "urn:aud" });
      expect([c.issuer, c.audience]).toEqual(["urn:issuer", "urn:aud"]);
      expect(() => testConfig({ ...db, JWT_ISSUER: "" })).toThrow(/JWT_ISSUER must not be empty/);
      expect(() => testConfig({ ...db, JWT_AUDIENCE: " " })).toThrow(/JWT_AUDIENCE must not be empty/);
    });

    it("defaults the key set timings to the verifier's contract values", () => {
      const c = testConfig(db);
      expect([c.jwksCacheMaxAgeMs, c.jwksCooldownMs]).toEqual([DEFAULT_JWKS_CACHE_MAX_AGE_MS, DEFAULT_JWKS_COOLDOWN_MS]);
      expect([DEFAULT_JWKS_CACHE_MAX_AGE_MS, DEFAULT_JWKS_COOLDOWN_MS]).toEqual([DEFAULT_CACHE_MAX_AGE_MS, DEFAULT_COOLDOWN_MS]);
    });

    it("refuses a JWKS max age + cooldown longer than the key activation delay, naming the variables", () => {
      expect(() => testConfig({ ...db, JWKS_CACHE_MAX_AGE_MS: "900000" })).toThrow(
        /KEY_ACTIVATION_DELAY_MS \(630000\) must be at least JWKS_CACHE_MAX_AGE_MS \+ JWKS_COOLDOWN_MS/,
      );
      const fast = testConfig({ ...db, KEY_ACTIVATION_DELAY_MS: "1200", JWKS_CACHE_MAX_AGE_MS: "1000", JWKS_COOLDOWN_MS: "200" });
      expect([fast.jwksCacheMaxAgeMs, fast.jwksCooldownMs]).toEqual([1000, 200]);
    });
  });

  it("requires BASE_URL in production, like identity (it is the JWT issuer and audience)", () => {
    const production = { DATABASE_URL: "postgresql://x/y", NODE_ENV: "production", DATA_ENCRYPTION_KEY: "k".repeat(32) };
    expect(() => testConfig(production)).toThrow(/BASE_URL is required in production/);
    expect(testConfig({ ...production, BASE_URL: "https://app.example.com" }).baseUrl).toBe("https://app.example.com");
  });

  it("reads the per-user caps, the resume depth and REDIS_URL", () => {
    const defaults = testConfig({ DATABASE_URL: "postgresql://x/y" });
    expect(defaults.userCaps).toEqual({ streams: 20, sockets: 20, generations: 3, mcpRequests: 8 });
    expect(defaults.mcpServer.toolCallsPerMinute).toBe(120);
    expect(defaults.sseMaxResumeEvents).toBe(500);
    expect(defaults.redisUrl).toBeUndefined();
    const set = testConfig({
      DATABASE_URL: "postgresql://x/y",
      MAX_STREAMS_PER_USER: "5",
      MAX_SOCKETS_PER_USER: "6",
      MAX_GENERATIONS_PER_USER: "1",
      MCP_SERVER_MAX_REQUESTS_PER_USER: "2",
      MCP_SERVER_TOOL_CALLS_PER_MINUTE: "7",
      SSE_MAX_RESUME_EVENTS: "50",
      REDIS_URL: "redis://127.0.0.1:6379",
    });
    expect(set.userCaps).toEqual({ streams: 5, sockets: 6, generations: 1, mcpRequests: 2 });
    expect(set.mcpServer.toolCallsPerMinute).toBe(7);
    expect(set.sseMaxResumeEvents).toBe(50);
    expect(set.redisUrl).toBe("redis://127.0.0.1:6379");
    expect(() => testConfig({ DATABASE_URL: "postgresql://x/y", MAX_GENERATIONS_PER_USER: "0" })).toThrow();
    expect(() => testConfig({ DATABASE_URL: "postgresql://x/y", MCP_SERVER_TOOL_CALLS_PER_MINUTE: "0" })).toThrow();
  });

  it("names the MCP server's resource, metadata and token issuer from the base URL", () => {
    const config = testConfig({ DATABASE_URL: "postgresql://x/y", BASE_URL: "https://app.example.com/", JWT_ISSUER: "other" });
    expect(config.mcpServer).toMatchObject({
      resource: "https://app.example.com/api/mcp",
      metadataUrl: "https://app.example.com/.well-known/oauth-protected-resource/api/mcp",
      issuer: "https://app.example.com",
    });
  });
});
