import { describe, expect, it } from "vitest";
import { SecretBox } from "./secret-box.js";

describe("SecretBox", () => {
  const box = new SecretBox("a-secret-of-sufficient-length-0000000", "test");

  it("round-trips and never returns the plaintext in the sealed form", () => {
    const sealed = box.seal("private key material", "kid-1");
    expect(sealed).not.toContain("private");
    expect(box.open(sealed, "kid-1")).toBe("private key material");
  });

  it("fails closed for another secret, another row, or a tampered ciphertext", () => {
    const sealed = box.seal("material", "kid-1");
    expect(new SecretBox("another-secret-of-sufficient-length-00", "test").open(sealed, "kid-1")).toBeUndefined();
    expect(box.open(sealed, "kid-2")).toBeUndefined();
    const parts = sealed.split(".");
    parts[3] = `${parts[3]?.slice(0, -2)}AA`;
    expect(box.open(parts.join("."), "kid-1")).toBeUndefined();
    expect(box.open("garbage", "kid-1")).toBeUndefined();
  });
});
