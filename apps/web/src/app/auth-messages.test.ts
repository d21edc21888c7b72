import { readdirSync, readFileSync } from "node:fs";
import { ApiError } from "@app/client";
import { describe, expect, it } from "vitest";
import { sentenceForMessage } from "./auth-messages.js";
import { describeError, sentenceFor } from "./messages.js";

/** The messages identity's organization routes refuse with (their table's values). */
function identityMessages(): string[] {
  const source = readFileSync(new URL("../../../identity/src/organizations/errors.ts", import.meta.url), "utf8");
  const table = source.slice(source.indexOf("const MESSAGES"), source.indexOf("} as const"));
  return [...table.matchAll(/^\s+[A-Z_]+: "([^"]+)",?$/gm)].map((match) => match[1] ?? "");
}

/** The messages identity's admin routes refuse with, for codes that do not explain themselves. */
function adminMessages(): string[] {
  const folder = new URL("../../../identity/src/admin/", import.meta.url);
  return readdirSync(folder)
    .filter((name) => name.endsWith(".ts"))
    .flatMap((name) => [
      ...readFileSync(new URL(name, folder), "utf8").matchAll(/new AppError\("(?:bad_request|forbidden|not_found|conflict)", "([^"]+)"/g),
    ])
    .map((match) => match[1] ?? "");
}

/** The messages identity's authorization server's own steps refuse with (consent page, authorized apps). */
function oauthMessages(): string[] {
  const folder = new URL("../../../identity/src/oauth-provider/", import.meta.url);
  return readdirSync(folder)
    .filter((name) => name.endsWith(".ts"))
    .flatMap((name) => {
      const source = readFileSync(new URL(name, folder), "utf8");
      // Literal messages, and the constants some refusals name (interactions.ts EXPIRED).
      const literal = [...source.matchAll(/new AppError\("(?:bad_request|forbidden|not_found|conflict)", "([^"]+)"/g)];
      const named = [...source.matchAll(/new AppError\("(?:bad_request|forbidden|not_found|conflict)", ([A-Z_]+)\)/g)].map((m) => {
        const value = new RegExp(`const ${m[1]} = "([^"]+)"`).exec(source);
        return value ?? [m[0], `no constant ${m[1]}`];
      });
      return [...literal, ...named];
    })
    .map((match) => match[1] ?? "");
}

describe("sentences for the refusals of organizations and admin", () => {
  it("has a sentence for every message identity's admin routes refuse with", () => {
    const messages = adminMessages();
    expect(messages.length).toBeGreaterThan(4);
    for (const message of messages) expect(sentenceForMessage(message), message).toBeDefined();
  });

  it("has a sentence for every message the consent page's and authorized apps' routes refuse with", () => {
    const messages = oauthMessages();
    expect(messages.length).toBeGreaterThan(4);
    for (const message of messages) expect(sentenceForMessage(message), message).toBeDefined();
    expect(describeError(new ApiError(404, "not_found", "no such client"))).toMatch(/^This app is not registered/);
  });

  it("has a sentence for every message identity's organization routes answer with", () => {
    const messages = identityMessages();
    expect(messages.length).toBeGreaterThan(30);
    for (const message of messages) expect(sentenceForMessage(message), message).toBeDefined();
  });

  it("says the reason behind a bad_request or forbidden, and the code's sentence for an unknown message", () => {
    expect(describeError(new ApiError(400, "bad_request", "User is already invited to this organization"))).toBe(
      "That address already has a pending invitation.",
    );
    expect(describeError(new ApiError(403, "forbidden", "You are not the recipient of the invitation"))).toMatch(/sent to another address/);
    expect(describeError(new ApiError(403, "forbidden", "something new"))).toBe(sentenceFor("forbidden"));
    expect(describeError(new ApiError(403, "forbidden", "not while acting as another user: stop impersonating first"))).toMatch(
      /Stop impersonating first\.$/,
    );
    // Only those codes: a message never replaces the sentence of a code that says enough.
    expect(describeError(new ApiError(401, "invalid_credentials", "Member not found"))).toBe(sentenceFor("invalid_credentials"));
  });

  it("tells a removed member why an organization's projects are gone, and a banned user that the account is suspended", () => {
    expect(describeError(new ApiError(404, "not_a_member", "not a member"))).toMatch(/not a member of this organization any more/);
    expect(describeError(new ApiError(403, "banned", "You have been banned from this application"))).toBe(sentenceFor("banned"));
  });
});
