import { ApiError } from "@app/client";
import { JWT_LIFETIME_SECONDS } from "@app/contracts";

/**
 * Shown on the sign-in page when the session ended anywhere but this page's own buttons: on
 * another device, by a password change or reset, by a deleted account, or a refusal a page met.
 */
export const SESSION_ENDED = new ApiError(401, "unauthorized", "the session ended");

/**
 * 401 codes about what was typed, not about the session: a wrong email or password, a wrong
 * second-factor code, and a pending second-factor sign-in that expired (nobody is signed in yet).
 */
const NOT_SESSION_ENDS = new Set(["invalid_credentials", "invalid_code", "invalid_two_factor_cookie"]);

/** True for a refusal that means this page's sign-in is over: any 401 but a wrong credential or code. */
export function endsSession(error: unknown): boolean {
  return error instanceof ApiError && error.status === 401 && !NOT_SESSION_ENDS.has(error.code);
}

let handler: ((error: unknown) => boolean) | undefined;

/** main.ts registers the one way into the signed-out state (see `enterSignedOut` there). */
export function setSessionEndHandler(next: (error: unknown) => boolean): void {
  handler = next;
}

/**
 * Every place that shows an error asks here first: a refusal that ends the session opens the
 * signed-out page instead of a sentence beside a header that still looks signed in. True when it did.
 */
export function reportSessionEnd(error: unknown): boolean {
  return endsSession(error) && (handler?.(error) ?? false);
}

/** "within a minute", "within 30 seconds", "within 2 minutes": how soon a check runs. */
export function withinInterval(seconds: number): string {
  if (seconds === 60) return "within a minute";
  if (seconds % 60 === 0) return `within ${seconds / 60} minutes`;
  return seconds === 1 ? "within a second" : `within ${seconds} seconds`;
}

/** How long an issued token lasts, in days (packages/contracts: JWT_LIFETIME_SECONDS). */
export const TOKEN_DAYS = Math.round(JWT_LIFETIME_SECONDS / 86_400);

/**
 * What ending a session does, in the words every page that ends one uses: this app elsewhere
 * signs out within one check interval (at once when next opened), while a token copied out of a
 * browser keeps working until it expires, because the service checks tokens without asking
 * identity (docs/accounts.md, "What a JWT keeps").
 */
export function sessionEndWords(seconds: number): { app: string; token: string } {
  return {
    app: `This app signs out on your other devices ${withinInterval(seconds)}, or as soon as it is opened there again.`,
    token:
      `A token copied out of a browser (into a script, say) keeps working until it expires, up to ${TOKEN_DAYS} days after it was issued: ` +
      `the service checks tokens without a list of ended sessions. Why: "What a JWT keeps" in docs/accounts.md of this project.`,
  };
}
