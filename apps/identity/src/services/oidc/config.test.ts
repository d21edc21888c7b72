import { describe, expect, it } from "vitest";
import { testConfig } from "../../config.js";
import { parseSocialProviders } from "./config.js";

const local = {
  OIDC_PROVIDERS: "local, Corp-SSO",
  OIDC_LOCAL_ISSUER: "http://127.0.0.1:9000",
  OIDC_LOCAL_CLIENT_ID: "id",
  OIDC_LOCAL_CLIENT_SECRET: "secret",
  OIDC_CORP_SSO_ISSUER: "https://sso.example.com/realms/corp",
  OIDC_CORP_SSO_CLIENT_ID: "corp",
  OIDC_CORP_SSO_CLIENT_SECRET: "corp-secret",
  OIDC_CORP_SSO_NAME: "Corp SSO",
  OIDC_CORP_SSO_SCOPES: "openid email",
};

describe("sign-in provider configuration", () => {
  it("reads each provider's variables, with default scopes and names", () => {
    const { providers, problems } = parseSocialProviders(local, false);
    expect(problems).toEqual([]);
    expect(providers).toEqual([
      expect.objectContaining({ id: "local", name: "local", kind: "oidc", scopes: "openid email profile", allowInsecure: true }),
      expect.objectContaining({
        id: "corp-sso",
        name: "Corp SSO",
        issuer: "https://sso.example.com/realms/corp",
        scopes: "openid email",
        allowInsecure: false,
      }),
    ]);
  });

  it("refuses a plain-http issuer in production, and off loopback anywhere", () => {
    expect(parseSocialProviders(local, true).problems).toEqual([
      { variable: "OIDC_LOCAL_ISSUER", message: "must use https in production" },
    ]);
    const remote = parseSocialProviders({ ...local, OIDC_LOCAL_ISSUER: "http://idp.example.com" }, false);
    expect(remote.problems.map((p) => p.variable)).toEqual(["OIDC_LOCAL_ISSUER"]);
  });

  it("names every missing variable, a bad id and a half-configured GitHub", () => {
    const { problems } = parseSocialProviders(
      { OIDC_PROVIDERS: "a,b_c,github", OIDC_A_ISSUER: "https://a.example.com", GITHUB_CLIENT_ID: "x" },
      false,
    );
    expect(problems.map((p) => p.variable)).toEqual([
      "OIDC_A_CLIENT_ID",
      "OIDC_A_CLIENT_SECRET",
      "OIDC_PROVIDERS",
      "OIDC_PROVIDERS",
      "GITHUB_CLIENT_SECRET",
    ]);
  });

  it("adds GitHub as a preset when both of its variables are set", () => {
    const { providers } = parseSocialProviders({ GITHUB_CLIENT_ID: "gh", GITHUB_CLIENT_SECRET: "gh-secret" }, true);
    expect(providers).toEqual([expect.objectContaining({ id: "github", name: "GitHub", kind: "github", issuer: "https://github.com" })]);
  });

  it("makes the identity config refuse to start on a bad provider", () => {
    const base = { DATABASE_URL: "postgresql://x@127.0.0.1/db", AUTH_SECRET: "s" };
    expect(testConfig({ ...base, ...local }).socialProviders.map((p) => p.id)).toEqual(["local", "corp-sso"]);
    expect(() => testConfig({ ...base, OIDC_PROVIDERS: "x" })).toThrow(/OIDC_X_ISSUER/);
  });
});
