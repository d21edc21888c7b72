import { describe, expect, it } from "vitest";
import { AUTH_VERIFY_ERROR_CODES, AUTH_VERIFY_ERROR_STATUS, AuthVerifyError, isAuthVerifyError, toAuthVerifyError } from "./errors.js";

describe("AuthVerifyError", () => {
  it("answers 401 for every code except jwks_unavailable (503)", () => {
    expect(AUTH_VERIFY_ERROR_CODES).toHaveLength(8);
    for (const code of AUTH_VERIFY_ERROR_CODES) {
      const error = new AuthVerifyError(code);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe("AuthVerifyError");
      expect(error.code).toBe(code);
      expect(error.status).toBe(code === "jwks_unavailable" ? 503 : 401);
      expect(error.status).toBe(AUTH_VERIFY_ERROR_STATUS[code]);
      expect(error.message.length).toBeGreaterThan(0);
    }
  });

  it("isAuthVerifyError narrows by class and optional code", () => {
    const error = new AuthVerifyError("token_expired");
    expect(isAuthVerifyError(error)).toBe(true);
    expect(isAuthVerifyError(error, "token_expired")).toBe(true);
    expect(isAuthVerifyError(error, "unknown_key")).toBe(false);
    expect(isAuthVerifyError(new Error("x"))).toBe(false);
  });
});

describe("toAuthVerifyError", () => {
  const jose = (code: string, extra: Record<string, unknown> = {}) =>
    Object.assign(new Error("jose says: header param secret-header-text"), { code, ...extra });

  it.each([
    ["ERR_JWT_EXPIRED", {}, "token_expired"],
    ["ERR_JWT_CLAIM_VALIDATION_FAILED", { claim: "nbf", reason: "check_failed" }, "token_not_yet_valid"],
    ["ERR_JWT_CLAIM_VALIDATION_FAILED", { claim: "nbf", reason: "invalid" }, "invalid_claims"],
    ["ERR_JWT_CLAIM_VALIDATION_FAILED", { claim: "iss", reason: "check_failed" }, "invalid_claims"],
    ["ERR_JWS_SIGNATURE_VERIFICATION_FAILED", {}, "invalid_signature"],
    ["ERR_JOSE_ALG_NOT_ALLOWED", {}, "invalid_signature"],
    ["ERR_JWT_CLAIM_VALIDATION_FAILED", { claim: "iat", reason: "check_failed" }, "invalid_claims"],
    ["ERR_JWT_CLAIM_VALIDATION_FAILED", { claim: "typ", reason: "check_failed" }, "invalid_claims"],
    ["ERR_JWS_INVALID", {}, "malformed_token"],
    ["ERR_JWT_INVALID", {}, "malformed_token"],
    ["ERR_JOSE_NOT_SUPPORTED", {}, "malformed_token"],
  ] as const)("maps %s %o to %s without reusing jose's message", (code, extra, expected) => {
    const mapped = toAuthVerifyError(jose(code, extra));
    expect(mapped.code).toBe(expected);
    expect(mapped.message).not.toContain("secret-header-text");
  });

  it("keeps an AuthVerifyError and wraps unknown errors as malformed_token with the cause", () => {
    const own = new AuthVerifyError("unknown_key");
    expect(toAuthVerifyError(own)).toBe(own);
    const bug = new TypeError("bug");
    const mapped = toAuthVerifyError(bug);
    expect(mapped.code).toBe("malformed_token");
    expect(mapped.cause).toBe(bug);
  });
});
