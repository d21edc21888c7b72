import { describe, expect, it } from "vitest";
import { describeError, ProviderSignInError } from "./messages.js";
import { landingMessage } from "./verify-banner.js";

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
