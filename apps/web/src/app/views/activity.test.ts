import { SECURITY_EVENT_TYPES } from "@app/contracts";
import { describe, expect, it } from "vitest";
import { eventWords, methodWords, whereWords } from "./activity.js";
import { filtersOf } from "./admin-events.js";

describe("security activity in words", () => {
  it("says every event type in plain words, never its code", () => {
    for (const type of SECURITY_EVENT_TYPES) {
      const words = eventWords({ type });
      expect(words, type).toMatch(/^[A-Z][a-z]/);
      expect(words, type).not.toContain("_");
    }
  });

  it("says how, what changed, and whose account it was", () => {
    expect(eventWords({ type: "sign_in", method: "passkey" })).toBe("Signed in with a passkey");
    expect(eventWords({ type: "sign_in_failed", method: "password" })).toBe("Sign-in failed with a password");
    expect(eventWords({ type: "sign_in", method: "something-new" })).toBe("Signed in");
    expect(eventWords({ type: "role_changed", detail: { role: "admin" } })).toBe("Admin role given");
    expect(eventWords({ type: "role_changed", detail: { role: "user" } })).toBe("Admin role taken away");
    expect(eventWords({ type: "user_banned", detail: { lifted: false } })).toBe("Account suspended");
    expect(eventWords({ type: "user_banned", detail: { lifted: true } })).toBe("Suspension lifted");
    expect(eventWords({ type: "session_revoked", detail: { count: 3 } })).toBe("Signed out of 3 sessions");
    expect(eventWords({ type: "session_revoked", detail: { count: 1 } })).toBe("Signed out of 1 session");
    expect(eventWords({ type: "impersonation_started" })).toBe("An admin started acting as you");
    expect(eventWords({ type: "impersonation_stopped" }, "admin")).toBe("An admin stopped acting as the user");
    expect(eventWords({ type: "key_rotated", detail: { step: "retired" } })).toBe("Signing key retired");
    expect(methodWords(undefined)).toBe("");
  });

  it("says where: a short device name and the address, or that no request was made", () => {
    const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
    expect(whereWords({ ip: "203.0.113.7", userAgent: firefox })).toBe("Firefox on Linux from 203.0.113.7");
    expect(whereWords({ ip: "203.0.113.7", userAgent: null })).toBe("from 203.0.113.7");
    expect(whereWords({ ip: null, userAgent: null })).toBe("No request (done by the service itself)");
  });
});

describe("the admins' event filters", () => {
  it("keeps what was filled in, trimmed, and drops what was not or is unknown", () => {
    const blank = { userId: "", type: "", outcome: "", from: "", to: "", ip: "", actorId: "" };
    expect(Object.values(filtersOf(blank)).filter((v) => v !== undefined)).toEqual([]);
    expect(
      filtersOf({ ...blank, userId: "  u-1 ", type: "sign_in_failed", outcome: "failure", from: "2026-11-01", ip: " 203.0.113.7" }),
    ).toMatchObject({ userId: "u-1", type: "sign_in_failed", outcome: "failure", from: "2026-11-01", ip: "203.0.113.7" });
    expect(filtersOf({ ...blank, type: "sign_on", outcome: "maybe" })).toMatchObject({ type: undefined, outcome: undefined });
  });
});
