import { AUTH_BASE_PATH, emailSchema } from "@app/contracts";
import type { PrismaClient, User } from "@app/db";
import { AppError, isAppError } from "@app/http-kit";
import * as client from "openid-client";
import type { Logger } from "pino";
import { NO_REQUEST, type RequestFacts } from "../../security-events/record.js";
import { recordSignInFailureReason } from "../../sign-in/failures.js";
import type { Finished as SignedIn } from "../../sign-in/finish.js";
import { trustedCallback } from "../callback-url.js";
import type { Sessions } from "../sessions.js";
import type { SocialProviderConfig } from "./config.js";
import { type FlowLink, type FlowState, FlowStateSealer } from "./flow-state.js";
import { type ClaimedIdentity, ProviderAccounts, sameMailbox } from "./provider-accounts.js";
import { ProviderClient, type ProviderProfile } from "./provider-client.js";

/**
 * Why a callback failed, as the `error` query parameter of the error callback URL.
 * `state_mismatch`: no, expired or different flow cookie; `access_denied` and other OAuth codes:
 * the provider's own answer; `invalid_grant`: the code was refused (replayed, expired);
 * `invalid_response`: the response or ID token failed a check (nonce, iss, aud, signature);
 * `provider_unavailable`: the provider could not be reached or failed; `email_missing`; the
 * refusals of provider-accounts.ts (`email_not_verified`, `account_not_linked`, and for
 * link-social `email_mismatch`, `account_already_linked`, `session_expired`); `banned`: an
 * operator's ban (docs/admin.md).
 */
export class SocialCallbackError extends Error {
  constructor(
    readonly code: string,
    readonly redirectTo: string,
    options?: { cause?: unknown },
  ) {
    super(`social sign-in failed: ${code}`, options);
  }
}

/**
 * Callback errors no `sign_in_failed` event is written for here: a ban, which the sign-in
 * finisher (sign-in/finish.ts) records itself, and the service's or provider's own failures.
 */
const NOT_RECORDED = new Set(["banned", "server_error", "provider_unavailable"]);

export interface StartInput {
  provider: string;
  callbackURL?: string | undefined;
  errorCallbackURL?: string | undefined;
  newUserCallbackURL?: string | undefined;
}

export interface SocialSettings {
  authSecret: string;
  baseUrl: string;
  trustedOrigins: readonly string[];
  /** As for email sign-in (services/identity.ts): no session for an unverified email. */
  requireEmailVerification?: boolean;
}

/**
 * What a finished callback did: signed someone in (`signedIn`: a session, or a pending second
 * factor), or linked an identity. `redirectTo` is where the sign-in goes once it is complete.
 */
export type Finished = { linked: false; signedIn: SignedIn; redirectTo: string } | { linked: true; redirectTo: string };

/** Ends the sign-in of the provider's user (sign-in/finish.ts, called by the route with its request). */
export type OpenSignIn = (user: User) => Promise<SignedIn>;

/** True when an error (or one of its causes) means the provider could not be reached or failed. */
function isUnavailable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof client.ResponseBodyError) return e.status >= 500;
    if (e instanceof TypeError || (e as { code?: unknown }).code === "OAUTH_TIMEOUT") return true;
    if (e instanceof client.ClientError && e.code === "OAUTH_RESPONSE_IS_NOT_CONFORM") return true;
  }
  return false;
}

/** The error code of a failed exchange. */
function exchangeErrorCode(error: unknown): string {
  if (error instanceof client.AuthorizationResponseError) return /^[a-z_]{1,64}$/.test(error.error) ? error.error : "access_denied";
  if (isUnavailable(error)) return "provider_unavailable";
  if (error instanceof client.ResponseBodyError) return error.error === "invalid_grant" ? "invalid_grant" : "invalid_response";
  return "invalid_response";
}

/**
 * Sign-in through OpenID Connect and OAuth 2.0 providers (docs/sign-in-providers.md): starts the
 * authorization request, finishes the callback into the same cookie session as email sign-in
 * (services/sessions.ts), or, for link-social, adds the identity to the signed-in user; which user
 * an identity may reach is provider-accounts.ts's rule.
 */
export class SocialSignIn {
  readonly #providers: Map<string, ProviderClient>;
  readonly #accounts: ProviderAccounts;
  readonly #settings: SocialSettings;
  readonly #sealer: FlowStateSealer;
  readonly #logger: Logger;
  readonly #db: PrismaClient;

  constructor(deps: {
    providers: SocialProviderConfig[];
    prisma: PrismaClient;
    sessions: Sessions;
    settings: SocialSettings;
    logger: Logger;
  }) {
    this.#providers = new Map(deps.providers.map((p) => [p.id, new ProviderClient(p)]));
    this.#accounts = new ProviderAccounts({
      prisma: deps.prisma,
      requireEmailVerification: deps.settings.requireEmailVerification === true,
    });
    this.#settings = deps.settings;
    this.#sealer = new FlowStateSealer(deps.settings.authSecret);
    this.#logger = deps.logger;
    this.#db = deps.prisma;
  }

  /** The configured providers, for the web app's buttons. */
  list(): Array<{ id: string; name: string }> {
    return [...this.#providers.values()].map((p) => ({ id: p.id, name: p.name }));
  }

  /** `{BASE_URL}/api/auth/callback/<id>`, the redirect URI registered at the provider. */
  redirectUri(id: string): string {
    return new URL(`${AUTH_BASE_PATH}/callback/${id}`, this.#settings.baseUrl).href;
  }

  /** Where a browser goes when a callback cannot even tell whose flow it is. */
  fallbackErrorUrl(): string {
    return new URL("/", this.#settings.trustedOrigins[0] ?? this.#settings.baseUrl).href;
  }

  /**
   * Validates the body, builds the authorization URL and seals the flow state for the cookie.
   * 404 `not_found` for an unknown provider, 403 `forbidden` for an untrusted callback URL,
   * 503 `service_unavailable` when discovery fails. With `link`, the callback links the identity
   * to that signed-in user instead of signing anyone in.
   */
  async start(input: StartInput, link?: FlowLink): Promise<{ url: string; sealed: string }> {
    const provider = this.#providers.get(input.provider);
    if (!provider) throw new AppError("not_found", `unknown provider "${input.provider}"`);
    const callbackURL = trustedCallback(input.callbackURL, "/", this.#trusted());
    const errorCallbackURL = trustedCallback(input.errorCallbackURL, callbackURL, this.#trusted());
    const newUserCallbackURL = trustedCallback(input.newUserCallbackURL, callbackURL, this.#trusted());
    const flow: FlowState = {
      provider: provider.id,
      state: client.randomState(),
      nonce: client.randomNonce(),
      codeVerifier: client.randomPKCECodeVerifier(),
      callbackURL,
      errorCallbackURL,
      newUserCallbackURL,
      ...(link ? { link } : {}),
    };
    let url: URL;
    try {
      url = await provider.authorizationUrl(this.redirectUri(provider.id), flow);
    } catch (error) {
      this.#logger.warn({ provider: provider.id, err: error }, "provider discovery failed");
      throw new AppError("service_unavailable", `provider "${provider.id}" is unavailable`, { cause: error });
    }
    return { url: url.href, sealed: await this.#sealer.seal(flow) };
  }

  /**
   * Finishes a callback: checks the flow cookie, lets openid-client exchange and validate, then
   * signs the provider's user in through `open` (a session, or a pending second factor) or links
   * the identity (link-social). Throws {@link SocialCallbackError} (with the error URL) on any
   * failure; nothing is written before the provider's answer is validated. A refused sign-in
   * (not a link) is recorded as `sign_in_failed` with the callback's error code; a new user as
   * `sign_up` with the `user.created` webhook, in the transaction that creates it.
   */
  async finish(providerId: string, callbackUrl: URL, sealed: string | undefined, open: OpenSignIn, facts = NO_REQUEST): Promise<Finished> {
    const flow = await this.#sealer.open(sealed);
    try {
      return await this.#finish(providerId, callbackUrl, flow, open, facts);
    } catch (error) {
      if (error instanceof SocialCallbackError && !flow?.link && !NOT_RECORDED.has(error.code)) {
        const provider = this.#providers.has(providerId) ? providerId : undefined;
        // The browser still goes back to the app with its error, whether or not the event is written.
        await recordSignInFailureReason(this.#db, error.code, { method: "provider", provider }, facts).catch((cause: unknown) =>
          this.#logger.warn({ provider, err: cause }, "failed provider sign-in not recorded"),
        );
      }
      throw error;
    }
  }

  async #finish(
    providerId: string,
    callbackUrl: URL,
    flow: FlowState | undefined,
    open: OpenSignIn,
    facts: RequestFacts,
  ): Promise<Finished> {
    const provider = this.#providers.get(providerId);
    if (!flow || !provider || flow.provider !== providerId || callbackUrl.searchParams.get("state") !== flow.state) {
      throw new SocialCallbackError("state_mismatch", withError(flow?.errorCallbackURL ?? this.fallbackErrorUrl(), "state_mismatch"));
    }
    const fail = (code: string, cause?: unknown) => new SocialCallbackError(code, withError(flow.errorCallbackURL, code), { cause });
    let profile: ProviderProfile;
    try {
      profile = await provider.exchange(callbackUrl, this.redirectUri(provider.id), flow);
    } catch (error) {
      const code = exchangeErrorCode(error);
      this.#logger.warn({ provider: providerId, code, err: error }, "social sign-in callback failed");
      throw fail(code, error);
    }
    // Normalised before any lookup or link (emailSchema: NFKC, IDNA, one trailing dot dropped).
    const parsed = emailSchema.safeParse(profile.email ?? "");
    if (!parsed.success) throw fail("email_missing");
    const claim: ClaimedIdentity = {
      providerId: provider.id,
      profile,
      email: parsed.data,
      verified: profile.emailVerified && sameMailbox(profile.email ?? "", parsed.data),
    };
    try {
      if (flow.link) {
        const result = await this.#accounts.link(flow.link, claim);
        if ("refused" in result) throw fail(result.refused);
        return { linked: true, redirectTo: flow.callbackURL };
      }
      const result = await this.#accounts.signIn(claim, facts);
      if ("refused" in result) throw fail(result.refused);
      const signedIn = await open(result.user);
      return { linked: false, signedIn, redirectTo: result.created ? flow.newUserCallbackURL : flow.callbackURL };
    } catch (error) {
      if (error instanceof SocialCallbackError) throw error;
      // An operator's ban (sign-in/finish.ts) is the user's answer, not a failure of the service.
      if (isAppError(error) && error.code === "banned") throw fail("banned", error);
      // A browser in the middle of a redirect flow is sent back to the app, not shown JSON.
      this.#logger.error({ provider: providerId, err: error }, "social sign-in could not store the user or session");
      throw fail("server_error", error);
    }
  }

  #trusted() {
    return { baseUrl: this.#settings.baseUrl, trustedOrigins: this.#settings.trustedOrigins };
  }
}

function withError(url: string, code: string): string {
  const out = new URL(url);
  out.searchParams.set("error", code);
  return out.href;
}
