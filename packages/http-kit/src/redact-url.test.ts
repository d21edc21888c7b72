import { describe, expect, it } from "vitest";
import { redactUrl } from "./redact-url.js";

const TOKEN = "Qm9vb29vb29vb29vb29vb29vb29vb29vb29vb29vb28";

describe("redactUrl: secret path segments", () => {
  it("redacts the reset token of GET /api/auth/reset-password/:token and keeps the rest", () => {
    expect(redactUrl(`/api/auth/reset-password/${TOKEN}?callbackURL=/reset`)).toBe(
      "/api/auth/reset-password/[REDACTED]?callbackURL=/reset",
    );
    expect(redactUrl(`/api/auth/reset-password/${TOKEN}`)).toBe("/api/auth/reset-password/[REDACTED]");
    expect(redactUrl("/api/auth/reset-password")).toBe("/api/auth/reset-password");
    expect(redactUrl("/api/auth/reset-password?token=abc")).toBe("/api/auth/reset-password?token=[REDACTED]");
  });

  it("redacts every spelling that reaches the route: case, trailing or doubled slashes, encoded names and slashes", () => {
    for (const url of [
      `/API/AUTH/Reset-Password/${TOKEN}`,
      `/api/auth/reset-password/${TOKEN}/`,
      `/api/auth//reset-password//${TOKEN}`,
      `/api/auth/reset%2Dpassword/${TOKEN}`,
      `/api/auth/reset-password%2F${TOKEN}`,
      `/api/auth/reset-password/${TOKEN}/extra?x=1`,
      `http://localhost:3000/api/auth/reset-password/${TOKEN}#frag`,
    ]) {
      const redacted = redactUrl(url) ?? "";
      expect(redacted, url).not.toContain(TOKEN);
      expect(redacted, url).toContain("[REDACTED]");
    }
  });

  it("leaves paths without a secret alone", () => {
    expect(redactUrl("/api/tasks/abc/messages?limit=5")).toBe("/api/tasks/abc/messages?limit=5");
    expect(redactUrl("/api/auth/request-password-reset")).toBe("/api/auth/request-password-reset");
  });
});

describe("redactUrl: the common path", () => {
  it("returns a path without a percent sign or a secret parent unchanged, and still finds a parent padded with `+`", () => {
    const path = "/api/me";
    expect(redactUrl(path)).toBe(path);
    expect(redactUrl(`/api/auth/+Reset-Password+/${TOKEN}`)).toBe("/api/auth/+Reset-Password+/[REDACTED]");
  });
});
