import { describe, expect, it } from "vitest";
import { DEFAULT_API_BASE_URL, DEFAULT_SESSION_RECHECK_SECONDS, resolveApiBaseUrl, resolveSessionRecheckSeconds } from "./config.js";

describe("resolveApiBaseUrl", () => {
  it("prefers the run-time config, then the build-time value, then the default", () => {
    expect(resolveApiBaseUrl({ apiBaseUrl: "http://localhost:4100/" }, "http://build:1")).toBe("http://localhost:4100");
    expect(resolveApiBaseUrl({}, "https://api.example.com")).toBe("https://api.example.com");
    expect(resolveApiBaseUrl(undefined, undefined)).toBe(DEFAULT_API_BASE_URL);
  });

  it("ignores values that are not absolute http(s) URLs", () => {
    expect(resolveApiBaseUrl({ apiBaseUrl: "javascript:alert(1)" }, "not a url")).toBe(DEFAULT_API_BASE_URL);
    expect(resolveApiBaseUrl({ apiBaseUrl: 42 }, "")).toBe(DEFAULT_API_BASE_URL);
    expect(resolveApiBaseUrl("http://x", "ftp://files")).toBe(DEFAULT_API_BASE_URL);
  });

  it("keeps a path prefix but drops query and fragment", () => {
    expect(resolveApiBaseUrl({ apiBaseUrl: "https://example.com/service/?x=1#y" }, undefined)).toBe("https://example.com/service");
  });
});

describe("resolveSessionRecheckSeconds", () => {
  it("takes the run-time config's whole number of seconds, else 60", () => {
    expect(resolveSessionRecheckSeconds({ sessionRecheckSeconds: 1 })).toBe(1);
    expect(resolveSessionRecheckSeconds({ sessionRecheckSeconds: 300 })).toBe(300);
    expect(resolveSessionRecheckSeconds({})).toBe(DEFAULT_SESSION_RECHECK_SECONDS);
    expect(resolveSessionRecheckSeconds(undefined)).toBe(60);
  });

  it("ignores values the server would refuse", () => {
    for (const bad of [0, -5, 1.5, 3601, "30", Number.NaN, null]) {
      expect(resolveSessionRecheckSeconds({ sessionRecheckSeconds: bad })).toBe(DEFAULT_SESSION_RECHECK_SECONDS);
    }
  });
});
