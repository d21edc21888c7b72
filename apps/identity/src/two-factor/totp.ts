import { generateSecret, generateURI, verify } from "otplib";

/** RFC 6238 as authenticator apps expect it: SHA-1, 6 digits, 30-second steps. */
const PERIOD_SECONDS = 30;
const DIGITS = 6;
const CODE_SHAPE = /^\d{6}$/;

/** A new TOTP secret: 20 random bytes in Base32 (otplib's default, what authenticator apps read). */
export function newTotpSecret(): string {
  return generateSecret();
}

/** The `otpauth://totp/...` URI an authenticator app scans. */
export function totpUri(secret: string, issuer: string, email: string): string {
  return generateURI({ issuer, label: email, secret, digits: DIGITS, period: PERIOD_SECONDS });
}

/**
 * The time step `code` is valid for at `epochSeconds`, one step either side accepted (clock drift),
 * or undefined. A step at or before `lastStep` (the last accepted one) is refused, so a code works
 * once. Malformed codes and a last step ahead of the window (the clock went back) are refusals too.
 */
export async function checkTotp(
  secret: string,
  code: string,
  epochSeconds: number,
  lastStep: number | undefined,
): Promise<number | undefined> {
  if (!CODE_SHAPE.test(code)) return undefined;
  try {
    const result = await verify({
      secret,
      token: code,
      epoch: epochSeconds,
      period: PERIOD_SECONDS,
      digits: DIGITS,
      epochTolerance: PERIOD_SECONDS,
      ...(lastStep === undefined ? {} : { afterTimeStep: lastStep }),
    });
    return result.valid && "timeStep" in result ? result.timeStep : undefined;
  } catch {
    return undefined;
  }
}
