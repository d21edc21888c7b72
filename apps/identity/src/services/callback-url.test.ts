import { describe, expect, it } from "vitest";
import { trustedCallback, withQuery } from "./callback-url.js";

const settings = { baseUrl: "https://auth.example.com/base", trustedOrigins: ["https://app.example.com"] };
const codeOf = (run: () => unknown) => {
  try {
    run();
    return "ok";
  } catch (error) {
    return (error as { code?: string }).code;
  }
};

describe("trustedCallback", () => {
  it("resolves paths against the base URL and accepts the base and trusted origins", () => {
    expect(trustedCallback("/reset", "/", settings)).toBe("https://auth.example.com/reset");
    expect(trustedCallback(undefined, "/x", settings)).toBe("https://auth.example.com/x");
    expect(trustedCallback("https://app.example.com/done?a=1", "/", settings)).toBe("https://app.example.com/done?a=1");
  });

  it("refuses other sites, protocol-relative and script URLs with 403 forbidden", () => {
    for (const raw of ["https://evil.example/", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "http://app.example.com/"]) {
      expect(
        codeOf(() => trustedCallback(raw, "/", settings)),
        raw,
      ).toBe("forbidden");
    }
  });

  it("sets query parameters, replacing one of the same name", () => {
    expect(withQuery("https://a.example/x?token=old&b=1", { token: "new" })).toBe("https://a.example/x?token=new&b=1");
  });
});
