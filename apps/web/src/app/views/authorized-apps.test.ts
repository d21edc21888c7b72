import { ApiError } from "@app/client";
import { describe, expect, it } from "vitest";
import { describeError } from "../messages.js";
import { byApp } from "./authorized-apps.js";
import { appName, CONSENT_LINK_SENTENCE, consentErrorSentence, siteHost } from "./oauth-consent.js";

const consent = (id: string, clientId: string, scopes: string[], createdAt: string) => ({
  id,
  clientId,
  userId: "u1",
  scopes,
  createdAt,
  expiresAt: null,
  clientName: `App ${clientId}`,
});

describe("the consent page and authorized apps", () => {
  it("names an app, and shows only an http(s) site's host", () => {
    expect(appName({ client_id: "c1", client_name: "  Notes  " })).toBe("Notes");
    expect(appName({ client_id: "c1", client_name: " " })).toBe("An app without a name");
    expect(appName({ client_id: "c1" })).toBe("An app without a name");
    expect(siteHost("https://notes.example:8443/about")).toBe("notes.example:8443");
    expect(siteHost("javascript:alert(1)")).toBeUndefined();
    expect(siteHost("not a url")).toBeUndefined();
    expect(siteHost(undefined)).toBeUndefined();
  });

  it("says a refused query is the link's fault, not the session's; other refusals as everywhere", () => {
    expect(consentErrorSentence(new ApiError(401, "invalid_signature", "x"))).toBe(CONSENT_LINK_SENTENCE);
    const expired = new ApiError(
      400,
      "bad_request",
      "this authorization request expired or was started in another browser: start again from the application",
    );
    expect(consentErrorSentence(expired)).toMatch(/^This request to connect an app has expired/);
    expect(consentErrorSentence(new ApiError(429, "rate_limited", "x"))).toBe(describeError(new ApiError(429, "rate_limited", "x")));
  });

  it("lists one row per app, newest consent first, with every scope any consent granted", () => {
    const rows = byApp([
      consent("g3", "b", ["openid"], "2026-01-03T00:00:00.000Z"),
      consent("g2", "a", ["openid", "mcp:write"], "2026-01-02T00:00:00.000Z"),
      consent("g1", "a", ["openid", "mcp:read"], "2026-01-01T00:00:00.000Z"),
    ]);
    expect(rows.map((row) => [row.id, row.clientId, row.scopes])).toEqual([
      ["g3", "b", ["openid"]],
      ["g2", "a", ["openid", "mcp:write", "mcp:read"]],
    ]);
  });
});
