import {
  type PublicUser,
  type SignInBody,
  type SignUpBody,
  type SocialProviderInfo,
  signInSocialResponse,
  signUpResponse,
  socialProvidersResponse,
} from "@app/contracts";
import { type AccountApi, accountApi } from "./account.js";
import { type AccountEventsApi, accountEventsApi } from "./account-events.js";
import { ApiError, errorFromResponse } from "./errors.js";
import { type Http, readJson } from "./http.js";
import { type UserAdminApi, userAdminApi } from "./identity-admin.js";
import { type OAuth2Api, oauth2Api } from "./oauth2.js";
import { type OrganizationApi, organizationApi } from "./organizations.js";
import { type PasskeyApi, passkeyApi } from "./passkeys.js";
import { type PasswordlessApi, passwordlessApi } from "./passwordless.js";
import { checkSession, type SessionCheck, type WatchSessionOptions, watchSession } from "./session.js";
import { completeSignIn, passwordSignInAnswer, type SignedIn, type SignInResult, signInAnswer } from "./sign-in.js";
import { type TwoFactorApi, twoFactorApi } from "./two-factor.js";
import { type WebhookAdminApi, webhookAdminApi } from "./webhooks.js";

export type { SignedIn, SignInResult } from "./sign-in.js";

/**
 * What sign-up did: signed the user in (the JWT is stored), or, when the service requires a
 * verified address (REQUIRE_EMAIL_VERIFICATION), signed nobody in and mailed a link to `user.email`;
 * the user signs in after following it. A taken address answers the same `verify_email` then
 * (docs/accounts.md "What sign-up reveals").
 */
export type SignUpResult = ({ status: "signed_in" } & SignedIn) | { status: "verify_email"; user: PublicUser };

/** What {@link AuthApi.signInSocial} sends: the provider and where identity sends the browser back. */
export interface SignInSocialOptions {
  provider: string;
  /** Where the browser lands signed in (same origin as a trusted origin of the service). */
  callbackURL: string;
  /** Where it lands after a failure, with `?error=<code>` (docs/sign-in-providers.md). */
  errorCallbackURL?: string;
}

/** What {@link AuthApi.linkSocial} sends: the provider to add and where identity sends the browser back. */
export interface LinkSocialOptions {
  provider: string;
  /** Where the browser lands once the provider is linked (the session stays as it was). */
  callbackURL: string;
  /**
   * Where it lands after a failure, with `?error=<code>`: `email_not_verified`, `email_mismatch`,
   * `account_already_linked`, `session_expired`, or a sign-in code (docs/sign-in-providers.md).
   */
  errorCallbackURL?: string;
}

/**
 * Sign-up, sign-in, session refresh and sign-out, following the contract's two-step login, and
 * the account lifecycle routes ({@link AccountApi}).
 */
export interface AuthApi extends AccountApi, PasswordlessApi {
  /**
   * Registers; when that signed the user in, awaits get-session and stores the JWT (the register
   * flow needs step 2 too). An answer `{ token: null, user }` signed nobody in: `verify_email`.
   */
  signUp(body: SignUpBody): Promise<SignUpResult>;
  /**
   * Step 1 posts the credentials (cookie only, no JWT); step 2 awaits get-session and stores the
   * JWT. An account with two-factor authentication on answers `two_factor` instead: no session
   * yet, and {@link AuthApi.twoFactor}'s verify calls finish the sign-in.
   */
  signIn(body: SignInBody): Promise<SignInResult>;
  /** Two-factor authentication: setting it up and the second step of a sign-in. */
  readonly twoFactor: TwoFactorApi;
  /** Passkeys: adding, listing, renaming, deleting, and signing in with one. */
  readonly passkey: PasskeyApi;
  /** Organizations, members, invitations, teams and the session's active organization. */
  readonly organization: OrganizationApi;
  /** Operators' user management (admins only): search, bans, sessions, impersonation. */
  readonly admin: UserAdminApi;
  /** The service as an OAuth 2.1 / OpenID provider: the consent page's calls and the user's authorized applications. */
  readonly oauth2: OAuth2Api;
  /** The security event log: the user's own sign-ins and account changes, and (admins) everyone's. */
  readonly events: AccountEventsApi;
  /** Admins' webhook endpoints, their delivery logs and retries. */
  readonly webhooks: WebhookAdminApi;
  /** The sign-in providers the service offers (`GET /api/auth/providers`), for "Continue with …" buttons. */
  providers(): Promise<SocialProviderInfo[]>;
  /**
   * Step 1 of a provider sign-in: starts the flow (identity sets its flow cookie) and returns the
   * provider's authorization URL; the caller navigates the top-level window there. Back at
   * `callbackURL`, {@link AuthApi.getSession} is step 2 and stores the JWT.
   */
  signInSocial(options: SignInSocialOptions): Promise<string>;
  /**
   * Starts adding a provider identity to the signed-in user, whose address must be verified
   * (403 `email_not_verified`), and returns the provider's authorization URL; the caller navigates
   * the top-level window there. Identity links the identity only when the provider vouches for
   * the user's own address, and sends the browser back to `callbackURL`.
   */
  linkSocial(options: LinkSocialOptions): Promise<string>;
  /** get-session with the cookie: stores a fresh JWT; null (and the token removed) without a session. */
  getSession(): Promise<SignedIn | null>;
  /**
   * Asks get-session once whether the cookie session still holds (storing a fresh JWT when it
   * does). `signed_out` only on a definite answer, with the JWT dropped and streams and sockets
   * closed; `unknown` when identity did not answer, with nothing changed.
   */
  checkSession(): Promise<SessionCheck>;
  /**
   * Treats the cookie session as the truth for this client: checks at once, every `intervalMs`
   * (default 60 s) and when the window regains focus, and calls `onSignedOut` when the session is
   * over (ended elsewhere, or a call found it gone). Returns the function that stops the watch.
   */
  watchSession(options: WatchSessionOptions): () => void;
  /** Removes the stored JWT at once (it stays valid until it expires), then ends the cookie session. */
  signOut(): Promise<void>;
  /** The stored JWT, or null. */
  token(): string | null;
  /** Subscribes to changes of the stored JWT; returns the unsubscribe function. */
  onTokenChange(listener: (token: string | null) => void): () => void;
}

/** Builds the {@link AuthApi} over a transport. */
export function authApi(http: Http): AuthApi {
  const post = async (path: string, body: unknown): Promise<Response> => {
    const response = await http.identity(path, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw await errorFromResponse(response);
    return response;
  };
  return {
    ...accountApi(http),
    ...passwordlessApi(http),
    twoFactor: twoFactorApi(http),
    passkey: passkeyApi(http),
    organization: organizationApi(http),
    admin: userAdminApi(http),
    oauth2: oauth2Api(http),
    events: accountEventsApi(http),
    webhooks: webhookAdminApi(http),
    async signUp(body) {
      const answer = await readJson(await post("/sign-up/email", body), signUpResponse);
      // better-auth's "verification required" answer: no session, no cookie, so no step 2.
      if ("token" in answer && answer.token === null) return { status: "verify_email", user: answer.user };
      return { status: "signed_in", ...(await completeSignIn(http)) };
    },
    signIn: async (body) => signInAnswer(http, await post("/sign-in/email", body), passwordSignInAnswer),
    async providers() {
      const response = await http.identity("/providers", { headers: { accept: "application/json" } });
      if (!response.ok) throw await errorFromResponse(response);
      return readJson(response, socialProvidersResponse);
    },
    async signInSocial({ provider, callbackURL, errorCallbackURL }) {
      const body = { provider, callbackURL, ...(errorCallbackURL ? { errorCallbackURL } : {}) };
      return (await readJson(await post("/sign-in/social", body), signInSocialResponse)).url;
    },
    async linkSocial({ provider, callbackURL, errorCallbackURL }) {
      const body = { provider, callbackURL, ...(errorCallbackURL ? { errorCallbackURL } : {}) };
      try {
        return (await readJson(await post("/link-social", body), signInSocialResponse)).url;
      } catch (error) {
        // As on the account routes: `unauthorized` here means the cookie session is gone.
        if (error instanceof ApiError && error.status === 401 && error.code === "unauthorized") http.endSession();
        throw error;
      }
    },
    async getSession() {
      const { token, session } = await http.refresh();
      return session && token ? { ...session, token } : null;
    },
    checkSession: () => checkSession(http),
    watchSession: (options) => watchSession(http, options),
    async signOut() {
      // The JWT goes first (and with it every stream and socket), so the page is signed out at
      // once; ending the cookie session needs only the cookie.
      http.tokens.set(null);
      const response = await http.identity("/sign-out", { method: "POST", headers: { accept: "application/json" } });
      await response.body?.cancel().catch(() => undefined);
    },
    token: () => http.tokens.get(),
    onTokenChange: (listener) => http.tokens.subscribe(listener),
  };
}
