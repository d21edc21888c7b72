import { describe, expect, it } from "vitest";
import { invitationSentence, roleWords } from "./accept-invitation.js";
import { BAN_LENGTHS, banWords } from "./admin-user.js";
import { slugFrom } from "./organization.js";
import { grantableRoles } from "./organization-members.js";

describe("organization pages", () => {
  it("makes a slug from a name: lower-case letters and digits joined by hyphens, at most 64 characters", () => {
    expect(slugFrom("Acme Research & Development")).toBe("acme-research-development");
    expect(slugFrom("  Café Zürich  ")).toBe("cafe-zurich");
    expect(slugFrom("!!!")).toBe("organization");
    const long = slugFrom(`${"a".repeat(63)} b`);
    expect(long.length).toBeLessThanOrEqual(64);
    expect(long).toMatch(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/);
  });

  it("names roles in words, several joined", () => {
    expect(roleWords("admin")).toBe("an admin");
    expect(roleWords("admin,member")).toBe("an admin and a member");
    expect(roleWords("custom")).toBe("custom");
  });

  it("says who invited whom to what, as what, until when", () => {
    const sentence = invitationSentence({
      inviterEmail: "ada@example.com",
      organizationName: "Analytical Engines",
      role: "member",
      expiresAt: "2030-01-02T03:04:05.000Z",
    });
    expect(sentence).toMatch(/^ada@example\.com invited you to join Analytical Engines as a member\. The invitation is open until /);
  });

  it("offers owners every role and admins admin and member", () => {
    expect(grantableRoles("owner")).toEqual(["member", "admin", "owner"]);
    expect(grantableRoles("admin")).toEqual(["member", "admin"]);
    expect(grantableRoles("admin, owner")).toContain("owner");
  });
});

describe("the admin's user page", () => {
  it("says whether an account is suspended, until when and why", () => {
    expect(banWords({ banned: false, banReason: null, banExpires: null })).toBe("Active: the account can sign in.");
    expect(banWords({ banned: true, banReason: "spam", banExpires: null })).toBe("Suspended until an admin lifts it. Reason: spam.");
    expect(banWords({ banned: true, banReason: null, banExpires: "2030-01-01T00:00:00.000Z" })).toMatch(/^Suspended until .+\.$/);
  });

  it("offers suspensions in whole seconds, the first one until lifted", () => {
    expect(BAN_LENGTHS[0]?.[0]).toBe("");
    for (const [value] of BAN_LENGTHS.slice(1)) expect(Number.isInteger(Number(value)) && Number(value) > 0).toBe(true);
  });
});
