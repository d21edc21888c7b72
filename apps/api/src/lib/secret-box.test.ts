import { describe, expect, it } from "vitest";
import { SecretBox } from "./secret-box.js";

describe("SecretBox", () => {
  it("opens only with the same key and context, and never contains the plaintext", () => {
    const box = new SecretBox("k".repeat(32));
    const sealed = box.seal("token-value", "mcp:1:access_token");
    expect(sealed).not.toContain("token-value");
    expect(box.open(sealed, "mcp:1:access_token")).toBe("token-value");
    expect(box.open(sealed, "mcp:2:access_token")).toBeUndefined();
    expect(new SecretBox("other-key-".repeat(4)).open(sealed, "mcp:1:access_token")).toBeUndefined();
    expect(box.seal("token-value", "c")).not.toBe(box.seal("token-value", "c"));
  });
});
