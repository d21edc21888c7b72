import { describe, expect, it } from "vitest";
import { describeError, PROVIDER_GENERIC_SENTENCE, ProviderSignInError, providerErrorSentence } from "./messages.js";

// Identity's provider callback codes (docs/sign-in-providers.md), of sign-in and of link-social:
// each has its own sentence, never the code.
const CODES = [
  "state_mismatch",
  "access_denied",
  "invalid_grant",
  "invalid_response",
  "provider_unavailable",
  "email_missing",
  "email_not_verified",
  "account_not_linked",
  "server_error",
  "account_conflict",
  "email_mismatch",
  "account_already_linked",
  "session_expired",
];

describe("provider sign-in error sentences", () => {
  it("say something specific for every documented callback code, without the code", () => {
    const sentences = CODES.map(providerErrorSentence);
    for (const [i, sentence] of sentences.entries()) {
      expect(sentence).not.toBe(PROVIDER_GENERIC_SENTENCE);
      expect(sentence).not.toContain(CODES[i]);
      expect(sentence).toMatch(/^[A-Z].*\.$/);
    }
    expect(new Set(sentences).size).toBe(CODES.length);
  });

  it("give the owner of an address someone else registered a way forward: the mailbox, then Account settings", () => {
    const sentence = providerErrorSentence("account_not_linked");
    expect(sentence).toContain('"Forgot password?"');
    expect(sentence).toContain("Account settings");
  });

  it("say that a provider which does not vouch for the address was used neither to sign in nor to link", () => {
    expect(providerErrorSentence("email_not_verified")).toMatch(/does not vouch for this email address.*sign in or link/);
  });

  it("fall back to a general sentence for a provider's own code or anything unexpected", () => {
    expect(providerErrorSentence("login_required")).toBe(PROVIDER_GENERIC_SENTENCE);
    expect(providerErrorSentence("__proto__")).toBe(PROVIDER_GENERIC_SENTENCE);
    expect(describeError(new ProviderSignInError("account_not_linked"))).toBe(providerErrorSentence("account_not_linked"));
  });
});
