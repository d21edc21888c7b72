import { describe, expect, it, vi } from "vitest";
import { describeError, ProviderSignInError } from "./messages.js";
import { landingMessage, verifiedLanding } from "./verify-banner.js";

describe("landingMessage", () => {
  it("turns identity's redirect queries into a notice or an error", () => {
    expect(landingMessage("?verified=1")).toEqual({ notice: "Your email address is verified." });
    expect(landingMessage("?email-changed=1")).toEqual({ notice: "Your email address is changed." });
    expect(landingMessage("?verified=1&error=INVALID_TOKEN").error?.code).toBe("invalid_token");
    expect(landingMessage("?email-changed=1&error=EMAIL_TAKEN").error?.code).toBe("email_taken");
    expect(landingMessage("")).toEqual({});
  });

  it("tells a provider's return (?signedIn=) from its error (?authError=1&error=), with a sentence and never the code", () => {
    expect(landingMessage("?signedIn=local")).toEqual({ provider: "local" });
    const { error } = landingMessage("?authError=1&error=account_not_linked");
    expect(error).toBeInstanceOf(ProviderSignInError);
    expect(describeError(error)).not.toContain("account_not_linked");
    expect(describeError(error)).not.toBe(describeError(landingMessage("?error=INVALID_TOKEN").error));
  });
});

describe("verifiedLanding", () => {
  it("lands on the app's start, or back on the invitation page it was asked from", () => {
    vi.stubGlobal("location", { origin: "http://web.test", hash: "#/tasks" });
    try {
      expect(verifiedLanding()).toBe("http://web.test/?verified=1");
      expect(verifiedLanding("#/accept-invitation/inv%2F1")).toBe("http://web.test/accept-invitation/inv%2F1?verified=1");
      expect(verifiedLanding("#/accept-invitation/a/b")).toBe("http://web.test/?verified=1");
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
