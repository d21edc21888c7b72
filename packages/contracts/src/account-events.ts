import { z } from "zod";

/**
 * The security event types (apps/identity/src/security-events/), in snake case as
 * GET /api/auth/account-events names them.
 */
export const SECURITY_EVENT_TYPES = [
  "sign_up",
  "sign_in",
  "sign_in_failed",
  "sign_out",
  "session_revoked",
  "password_changed",
  "password_reset",
  "email_changed",
  "email_verified",
  "two_factor_enabled",
  "two_factor_disabled",
  "passkey_added",
  "passkey_removed",
  "account_deleted",
  "user_banned",
  "impersonation_started",
  "impersonation_stopped",
  "role_changed",
  "oauth_consent_granted",
  "oauth_consent_revoked",
  "key_rotated",
] as const;

/** One security event type. */
export const securityEventType = z.enum(SECURITY_EVENT_TYPES);
export type SecurityEventType = z.infer<typeof securityEventType>;

/** Whether the action an event records succeeded. */
export const securityEventOutcome = z.enum(["success", "failure"]);
export type SecurityEventOutcome = z.infer<typeof securityEventOutcome>;
