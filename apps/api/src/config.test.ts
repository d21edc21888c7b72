import path from "node:path";
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
      testConfig({ DATABASE_URL: "postgresql://x/y", NODE_ENV: "production", DATA_ENCRYPTION_KEY: "x".repeat(32) }),
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
        MCP_ALLOW_PRIVATE_URLS: "true",
      }),
    ).toThrow(/MCP_ALLOW_PRIVATE_URLS/);
  });
});
