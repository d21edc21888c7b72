import { ApiError } from "@app/client";
import { ERROR_CODES } from "@app/contracts";
import { describe, expect, it } from "vitest";
import { describeError, GENERIC_SENTENCE, issueSentence, PASSKEY_GENERIC_SENTENCE, PasskeyError, sentenceFor } from "./messages.js";

describe("error sentences", () => {
  it("has a sentence for every code the service can answer, and none of them shows the code", () => {
    for (const code of ERROR_CODES) {
      const sentence = sentenceFor(code);
      expect(sentence, code).not.toBe(GENERIC_SENTENCE);
      expect(sentence).not.toContain(code);
    }
  });

  it("falls back to a generic sentence for unknown codes and non-API errors", () => {
    expect(sentenceFor("brand_new_code")).toBe(GENERIC_SENTENCE);
    expect(describeError(new Error("TypeError: x is undefined"))).toBe(GENERIC_SENTENCE);
    expect(describeError(new ApiError(429, "rate_limited", "rate limit: 10/min"))).toBe("Too many attempts. Wait a moment and try again.");
  });

  it("says how long to wait after a 429 with Retry-After", () => {
    const limited = (retryAfter: number) => new ApiError(429, "rate_limited", "slow down", { retryAfter });
    expect(describeError(limited(42))).toBe("Too many attempts. Try again in 42 seconds.");
    expect(describeError(limited(1))).toBe("Too many attempts. Try again in 1 second.");
    expect(describeError(limited(900))).toBe("Too many attempts. Try again in 15 minutes.");
    expect(describeError(limited(121))).toBe("Too many attempts. Try again in 3 minutes.");
  });

  it("keeps the service's own field sentences and rewrites zod's default wording", () => {
    expect(issueSentence({ path: "password", message: "password must be at least 8 characters" })).toBe(
      "password must be at least 8 characters",
    );
    expect(issueSentence({ path: "model", message: "Too small: expected string to have >=1 characters" })).toBe("model is required");
    expect(issueSentence({ path: "oauth.clientId", message: "Too big: expected string to have <=500 characters" })).toBe(
      "clientId must be at most 500 characters",
    );
    expect(issueSentence({ path: "maxTokens", message: "Invalid input: expected number, received undefined" })).toBe(
      "maxTokens is required",
    );
    expect(issueSentence({ path: "role", message: 'Invalid option: expected one of "user"|"assistant"' })).toBe(
      "role must be one of the listed choices",
    );
  });
});

describe("the MCP routes' own codes", () => {
  it("have sentences too", () => {
    for (const code of ["mcp_reconnect_required", "mcp_upstream_unavailable", "mcp_upstream_timeout"]) {
      expect(sentenceFor(code), code).not.toBe(GENERIC_SENTENCE);
    }
  });
});

describe("passkey sentences", () => {
  it("say what a refused ceremony means, without its code, and fall back for unknown ones", () => {
    const cancelled = describeError(new PasskeyError("NotAllowedError"));
    expect(cancelled).toContain("cancelled or timed out");
    expect(describeError(new PasskeyError("ERROR_PASSTHROUGH_SEE_CAUSE_PROPERTY"))).toBe(cancelled);
    expect(describeError(new PasskeyError("ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED"))).toContain("already holds a passkey");
    expect(describeError(new PasskeyError("ERROR_SOMETHING_NEW"))).toBe(PASSKEY_GENERIC_SENTENCE);
    for (const code of ["NotAllowedError", "ERROR_INVALID_RP_ID", "toString"])
      expect(describeError(new PasskeyError(code))).not.toContain(code);
  });
});
