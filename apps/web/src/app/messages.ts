import { ApiError } from "@app/client";
import type { FieldIssue } from "@app/contracts";
import { sentenceForMessage } from "./auth-messages.js";

/**
 * What a person reads for each error code (packages/contracts/src/errors.ts, plus the client's
 * own codes from packages/client/src/errors.ts). Codes never reach the page themselves.
 */
const SENTENCES: Record<string, string> = {
  bad_request: "The request could not be understood. Check what you entered and try again.",
  invalid_token: "That link is invalid or has expired. Ask for a new one.",
  invalid_password: "That password is not correct.",
  invalid_json: "The request could not be understood. Reload the page and try again.",
  validation_failed: "Some fields need attention.",
  unauthorized: "Your session has ended. Sign in again.",
  invalid_credentials: "That email and password do not match an account.",
  missing_token: "Your session has ended. Sign in again.",
  malformed_token: "Your session has ended. Sign in again.",
  invalid_signature: "Your session has ended. Sign in again.",
  token_expired: "Your session has expired. Sign in again.",
  token_not_yet_valid: "Your session is not valid yet. Check your device's clock, then sign in again.",
  invalid_claims: "Your session has ended. Sign in again.",
  unknown_key: "Your session has ended. Sign in again.",
  forbidden: "You do not have permission to do that.",
  origin_not_allowed: "This site is not allowed to talk to the service.",
  email_not_verified: "Confirm your email address first: follow the link in the message we sent you.",
  not_found: "That item does not exist, or it is not yours.",
  method_not_allowed: "That action is not available.",
  conflict: "Someone else changed this in the meantime. Reload and try again.",
  email_taken: "An account with that email already exists. Sign in instead.",
  code_expired: "That code has expired. Ask for a new one.",
  challenge_expired: "That took too long. Start again.",
  passkey_verification_failed: "The passkey could not be verified. Try again, or use another way to sign in.",
  two_factor_not_enabled: "Two-factor authentication is not on for this account.",
  invalid_code: "That code is not right, or it was already used. Check it and try again.",
  invalid_two_factor_cookie: "That sign-in took too long. Sign in again.",
  too_many_attempts: "Too many wrong tries for that code. Ask for a new one.",
  banned: "This account is suspended. Contact the operator of this service.",
  not_a_member: "You are not a member of this organization any more, so its projects are not shown. Pick another one in the header.",
  insufficient_scope: "The app you connected was not given permission for that.",
  session_not_fresh: "For this, sign in again first, or confirm it from the mail we send you.",
  payload_too_large: "That is too large for the service to accept.",
  unsupported_media_type: "That type of file is not accepted.",
  rate_limited: "Too many attempts. Wait a moment and try again.",
  internal_error: "Something went wrong on our side. Try again in a moment.",
  service_unavailable: "The service is unavailable right now. Try again in a moment.",
  jwks_unavailable: "The service is unavailable right now. Try again in a moment.",
  mail_unavailable: "The email could not be sent right now. Try again in a moment.",
  // The MCP routes' own codes (apps/api/src/mcp/errors.ts).
  mcp_reconnect_required: "The MCP server no longer accepts this connection. Connect it again.",
  mcp_upstream_unavailable: "The MCP server cannot be reached right now. Try again later.",
  mcp_upstream_invalid: "The MCP server answered in a way the service cannot use.",
  mcp_result_too_large: "The MCP server's answer is too large to show.",
  mcp_upstream_timeout: "The MCP server took too long to answer. Try again later.",
  network_error: "The service cannot be reached. Check your connection and try again.",
  invalid_response: "The service answered in a way this page does not understand. Reload and try again.",
  aborted: "The request was stopped.",
};

/** Said when nothing better is known. */
export const GENERIC_SENTENCE = "Something went wrong. Try again in a moment.";

/** The sentence for an error code (a generic one for codes this page does not know). */
export function sentenceFor(code: string): string {
  return SENTENCES[code] ?? GENERIC_SENTENCE;
}

/**
 * What a person reads when sign-in with a provider, or linking one from Account settings
 * (views/linked-accounts.ts), came back with `?error=<code>`: identity's callback codes
 * (docs/sign-in-providers.md). Some share a name with a general code (`invalid_response`,
 * `email_not_verified`) but mean something else here, and `email_not_verified` answers both flows,
 * so its sentence fits both.
 */
const PROVIDER_SENTENCES: Record<string, string> = {
  state_mismatch: "Signing in could not finish in this browser: it took too long, or began in another browser. Try again.",
  access_denied: "Signing in was cancelled at the provider. Try again, or sign in with your email.",
  invalid_grant: "The provider's sign-in expired before it could finish. Try again.",
  invalid_response: "The provider's answer could not be trusted, so you were not signed in. Try again in a moment.",
  provider_unavailable: "The provider cannot be reached right now. Try again in a moment, or sign in with your email.",
  email_missing:
    "The provider did not share an email address, and an account needs one. Allow it at the provider, or sign up with your email.",
  email_not_verified:
    "The provider does not vouch for this email address, so it was not used to sign in or link an account. Confirm the address at the provider and try again, or use your email and password.",
  account_not_linked:
    'An account with this email already exists, but its address is not confirmed yet. If it is yours, reset the password with "Forgot password?" (the mailed link proves the address), then link the provider from Account settings.',
  server_error: "Something went wrong on our side while signing you in. Try again in a moment.",
  account_conflict: "Signing in happened twice at the same moment. Try again.",
  // Linking from Account settings (POST /api/auth/link-social).
  email_mismatch:
    "The provider's account has a different email address from yours, so it was not linked. Sign in there with the account for your address, then try again.",
  account_already_linked: "That provider account is already linked to another account here, so it was not linked to yours.",
  session_expired: "Your session ended before the provider answered, so nothing was linked. Sign in, then link the provider again.",
};

/** Said for a provider's own refusal codes (`login_required`, `interaction_required`, …). */
export const PROVIDER_GENERIC_SENTENCE = "Signing in with that provider did not work. Try again, or sign in with your email.";

/** The sentence for a provider sign-in error code (never the code itself). */
export function providerErrorSentence(code: string): string {
  return Object.hasOwn(PROVIDER_SENTENCES, code) ? (PROVIDER_SENTENCES[code] as string) : PROVIDER_GENERIC_SENTENCE;
}

/** A provider sign-in that came back with `?error=<code>` (views/auth.ts). */
export class ProviderSignInError extends Error {
  override readonly name = "ProviderSignInError";
  constructor(readonly code: string) {
    super(`provider sign-in failed: ${code}`);
  }
}

/**
 * What a person reads when the browser's passkey ceremony refused (@simplewebauthn/browser's
 * `WebAuthnError` codes, or a DOMException's name it passed through). A cancelled dialog and one
 * that timed out look the same to the page (`NotAllowedError`), so one sentence covers both.
 */
const PASSKEY_SENTENCES: Record<string, string> = {
  ERROR_PASSTHROUGH_SEE_CAUSE_PROPERTY: "No passkey was used: the request was cancelled or timed out. Try again, or sign in another way.",
  NotAllowedError: "No passkey was used: the request was cancelled or timed out. Try again, or sign in another way.",
  ERROR_CEREMONY_ABORTED: "The passkey request was stopped. Try again.",
  ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED: "This device already holds a passkey for your account.",
  InvalidStateError: "This device already holds a passkey for your account.",
  ERROR_INVALID_DOMAIN: "Passkeys do not work at this address of the site. Open it over HTTPS or at localhost.",
  ERROR_INVALID_RP_ID: "Passkeys of this service do not work at this address of the site.",
  SecurityError: "Passkeys do not work at this address of the site.",
  NotSupportedError: "This browser or device cannot use passkeys. Sign in another way.",
  ERROR_AUTHENTICATOR_NO_SUPPORTED_PUBKEYCREDPARAMS_ALG: "This device cannot make a passkey this service accepts.",
  ERROR_AUTHENTICATOR_MISSING_DISCOVERABLE_CREDENTIAL_SUPPORT: "This device cannot store a passkey that signs you in by itself.",
  ERROR_AUTHENTICATOR_MISSING_USER_VERIFICATION_SUPPORT:
    "This device cannot check that it is you (a PIN, fingerprint or face), which a passkey needs.",
};

/** Said for any other refusal of the passkey ceremony. */
export const PASSKEY_GENERIC_SENTENCE = "The passkey could not be used. Try again, or sign in another way.";

/** The browser refused a passkey ceremony (apps/web/src/app/passkey.ts). */
export class PasskeyError extends Error {
  override readonly name = "PasskeyError";
  constructor(readonly code: string) {
    super(`passkey ceremony failed: ${code}`);
  }
}

/** The sentence for a refused passkey ceremony (never the code itself). */
export function passkeyErrorSentence(code: string): string {
  return Object.hasOwn(PASSKEY_SENTENCES, code) ? (PASSKEY_SENTENCES[code] as string) : PASSKEY_GENERIC_SENTENCE;
}

/** How long to wait, in words: seconds up to two minutes, then whole minutes (rounded up). */
export function waitWords(seconds: number): string {
  if (seconds <= 1) return "1 second";
  if (seconds < 120) return `${seconds} seconds`;
  return `${Math.ceil(seconds / 60)} minutes`;
}

/**
 * The sentence for anything thrown. A 429 names the wait its `Retry-After` gives (the client reads
 * it into `retryAfter`, packages/client/src/errors.ts), so a person knows when to try again.
 */
export function describeError(error: unknown): string {
  if (error instanceof ProviderSignInError) return providerErrorSentence(error.code);
  if (error instanceof PasskeyError) return passkeyErrorSentence(error.code);
  if (error instanceof ApiError && error.code === "rate_limited" && error.retryAfter) {
    return `Too many attempts. Try again in ${waitWords(error.retryAfter)}.`;
  }
  if (error instanceof ApiError && ["bad_request", "forbidden", "not_found", "conflict"].includes(error.code)) {
    const sentence = sentenceForMessage(error.message);
    if (sentence) return sentence;
  }
  if (error instanceof ApiError) return sentenceFor(error.code);
  return GENERIC_SENTENCE;
}

const field = (path: string) => path.split(".").pop() || "this field";

/**
 * A field problem as a sentence. The service's own messages are sentences already ("password
 * must be at least 8 characters"); zod's default messages (schemas without a custom one) are
 * rewritten from their wording, since the envelope carries only `path` and `message`.
 */
export function issueSentence(issue: FieldIssue): string {
  const name = field(issue.path);
  const m = issue.message;
  let match = /^Too small: expected (string|array|number) to (?:have|be) >=?\s*(\d+)/i.exec(m);
  if (match) {
    const [, kind, n] = match;
    if (kind === "string") return n === "1" ? `${name} is required` : `${name} must be at least ${n} characters`;
    return kind === "array" ? `${name} needs at least ${n} items` : `${name} must be at least ${n}`;
  }
  match = /^Too big: expected (string|array|number) to (?:have|be) <=?\s*(\d+)/i.exec(m);
  if (match) {
    const [, kind, n] = match;
    if (kind === "string") return `${name} must be at most ${n} characters`;
    return kind === "array" ? `${name} can have at most ${n} items` : `${name} must be at most ${n}`;
  }
  if (/^Invalid input: expected \w+, received undefined/i.test(m)) return `${name} is required`;
  if (/^Invalid input: expected/i.test(m)) return `${name} has the wrong type`;
  if (/^Invalid (email|e-mail)/i.test(m)) return `${name} must be a valid email address`;
  if (/^Invalid URL/i.test(m)) return `${name} must be a valid URL`;
  if (/^Invalid option/i.test(m)) return `${name} must be one of the listed choices`;
  if (/^Unrecognized key/i.test(m)) return "the form sent a field the service does not know";
  if (/^Invalid/i.test(m)) return `${name} is not valid`;
  return m;
}
