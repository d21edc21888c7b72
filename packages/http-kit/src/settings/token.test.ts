import { describe, expect, it } from "vitest";
import { z } from "zod";
import { refineSharedSettings, sharedSettingsShape, tokenSettings } from "./token.js";

const schema = z.object({ NODE_ENV: z.string().default("test"), ...sharedSettingsShape }).superRefine(refineSharedSettings);
const messages = (env: Record<string, string>) => {
  const result = schema.safeParse(env);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
};

describe("shared settings", () => {
  it("defaults to the contract's timings (10 min max age, 30 s cooldown, 10.5 min activation)", () => {
    const env = schema.parse({});
    expect([env.JWKS_CACHE_MAX_AGE_MS, env.JWKS_COOLDOWN_MS, env.KEY_ACTIVATION_DELAY_MS]).toEqual([600_000, 30_000, 630_000]);
  });

  it("accepts an activation delay equal to max age + cooldown and refuses one shorter", () => {
    expect(messages({ KEY_ACTIVATION_DELAY_MS: "1200", JWKS_CACHE_MAX_AGE_MS: "1000", JWKS_COOLDOWN_MS: "200" })).toEqual([]);
    const [issue] = messages({ KEY_ACTIVATION_DELAY_MS: "1199", JWKS_CACHE_MAX_AGE_MS: "1000", JWKS_COOLDOWN_MS: "200" });
    expect(issue).toMatch(/^KEY_ACTIVATION_DELAY_MS: .*JWKS_CACHE_MAX_AGE_MS \+ JWKS_COOLDOWN_MS \(1000 \+ 200 = 1200\)/);
  });

  it("requires BASE_URL in production only", () => {
    expect(messages({ NODE_ENV: "production" })).toEqual([expect.stringMatching(/^BASE_URL: BASE_URL is required in production/)]);
    expect(messages({ NODE_ENV: "production", BASE_URL: "https://app.example.com" })).toEqual([]);
    expect(messages({ BASE_URL: "not a url" })).toEqual([expect.stringMatching(/BASE_URL must be an absolute URL/)]);
  });

  it("derives issuer and audience from BASE_URL unless set", () => {
    expect(tokenSettings({ BASE_URL: "https://a.example.com//" })).toEqual({
      baseUrl: "https://a.example.com",
      issuer: "https://a.example.com",
      audience: "https://a.example.com",
    });
    expect(tokenSettings({ JWT_ISSUER: "i", JWT_AUDIENCE: "a" })).toEqual({ baseUrl: "http://localhost:3000", issuer: "i", audience: "a" });
  });
});
