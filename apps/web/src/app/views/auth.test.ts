import { describe, expect, it } from "vitest";
import { checkInboxSentence } from "./auth.js";

describe("checkInboxSentence", () => {
  it("names the address the link went to and what to do next, without codes", () => {
    const sentence = checkInboxSentence("ada@example.com");
    expect(sentence).toBe("Check your inbox: we sent a link to ada@example.com to confirm your address. Follow it, then sign in.");
    expect(sentence).not.toMatch(/verify_email|_/);
  });
});
