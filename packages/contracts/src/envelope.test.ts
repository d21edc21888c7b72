import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ERROR_CODES, ERROR_STATUS, errorEnvelopeSchema, fail, ok, okSchema, signInBody, signUpBody, toFieldIssues } from "./index.js";

describe("envelope", () => {
  it("wraps data as { ok: true, data }", () => {
    expect(ok([1, 2])).toEqual({ ok: true, data: [1, 2] });
    expect(okSchema(z.array(z.number())).parse(ok([1]))).toEqual({ ok: true, data: [1] });
  });

  it("builds error envelopes that satisfy their own schema", () => {
    const env = fail("validation_failed", "bad", [{ path: "email", message: "x" }]);
    expect(errorEnvelopeSchema.parse(env)).toEqual(env);
    expect(fail("not_found", "nope")).toEqual({ ok: false, error: { code: "not_found", message: "nope" } });
  });

  it("gives every code a 4xx or 5xx status", () => {
    for (const code of ERROR_CODES) expect(ERROR_STATUS[code]).toBeGreaterThanOrEqual(400);
  });

  it("names failing fields by path", () => {
    const r = signUpBody.safeParse({ email: "nope", password: "x", name: "" });
    expect(r.success).toBe(false);
    if (!r.success)
      expect(
        toFieldIssues(r.error)
          .map((i) => i.path)
          .sort(),
      ).toEqual(["email", "name", "password"]);
  });
});

describe("auth schemas", () => {
  it("normalises email case and Unicode composition", () => {
    const a = signInBody.parse({ email: "  Ann@Example.COM ", password: "p" });
    expect(a.email).toBe("ann@example.com");
    const composed = signInBody.parse({ email: "jos\u00e9@example.com", password: "p" }).email;
    const decomposed = signInBody.parse({ email: "jose\u0301@example.com", password: "p" }).email;
    expect(decomposed).toBe(composed);
  });

  it("bounds password length before any hashing", () => {
    expect(signUpBody.safeParse({ email: "a@b.co", password: "x".repeat(129), name: "A" }).success).toBe(false);
    expect(signUpBody.safeParse({ email: "a@b.co", password: "x".repeat(128), name: "A" }).success).toBe(true);
    expect(signInBody.safeParse({ email: "a@b.co", password: "x".repeat(10_000) }).success).toBe(false);
  });

  it("rejects unknown fields and non-string values", () => {
    expect(signInBody.safeParse({ email: "a@b.co", password: "p", role: "admin" }).success).toBe(false);
    expect(signInBody.safeParse({ email: { $ne: null }, password: "p" }).success).toBe(false);
  });
});
