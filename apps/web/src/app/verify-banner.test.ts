import { describe, expect, it } from "vitest";
import { landingMessage } from "./verify-banner.js";

describe("landingMessage", () => {
  it("turns identity's redirect queries into a notice or an error", () => {
    expect(landingMessage("?verified=1")).toEqual({ notice: "Your email address is verified." });
    expect(landingMessage("?email-changed=1")).toEqual({ notice: "Your email address is changed." });
    expect(landingMessage("?verified=1&error=INVALID_TOKEN").error?.code).toBe("invalid_token");
    expect(landingMessage("?email-changed=1&error=EMAIL_TAKEN").error?.code).toBe("email_taken");
    expect(landingMessage("")).toEqual({});
  });
});
