import {
  type OAuthConsent,
  type OAuthPublicClient,
  oauthConsentResponse,
  oauthConsentSchema,
  oauthConsentsResponse,
  oauthDeleteConsentResponse,
  oauthPublicClientResponse,
} from "@app/contracts";
import type { Http } from "./http.js";
import { identityJson } from "./sign-in.js";

// The wire of identity's own routes of the authorization server (apps/identity/src/oauth-provider/
// routes.ts), as better-auth 1.7's `@better-auth/oauth-provider` shapes them: the schemas are
// packages/contracts/src/oauth-provider.ts's, the one copy identity answers with.

/** What the consent page shows of the application asking (GET oauth2/public-client). */
export const publicClientSchema = oauthPublicClientResponse;
export type PublicClient = OAuthPublicClient;

/** An application the user authorized (one consent: the scopes granted to one client). */
export const authorizedAppSchema = oauthConsentSchema;
export type AuthorizedApp = OAuthConsent;

const consentResponse = oauthConsentResponse;
const deleteConsentResponse = oauthDeleteConsentResponse;

/** The names identity's signature covers: `sig`, and `ba_param` listing every other signed name. */
const SIG = "sig";
const SIGNED_NAMES = "ba_param";

/**
 * The signed part of a consent page's query string (`location.search`, with or without its `?`):
 * `sig`, `ba_param` and every parameter `ba_param` names, in the order received, as better-auth's
 * `oauthProviderClient` sends it. Anything else on the address (a parameter a link added) is left
 * out, since identity refuses a query holding a parameter its signature does not cover. Undefined
 * when the query carries no signature.
 */
export function signedConsentQuery(search: string): string | undefined {
  const params = new URLSearchParams(search.startsWith("?") ? search.slice(1) : search);
  const named = new Set(params.getAll(SIGNED_NAMES));
  if (!params.has(SIG) || named.size === 0) return undefined;
  const kept = new URLSearchParams();
  for (const [name, value] of params) if (name === SIG || name === SIGNED_NAMES || named.has(name)) kept.append(name, value);
  return kept.toString();
}

/** What the consent page sends (POST oauth2/consent). */
export interface ConsentDecision {
  /** true grants the scopes (all requested, or `scope`); false refuses: the client gets `error=access_denied`. */
  accept: boolean;
  /**
   * The scopes granted, space-separated: a subset of the requested ones (identity refuses any
   * other); `openid`, when requested, is granted whatever this says. Left out: all requested.
   */
  scope?: string;
  /** The consent page's query string, as received (`location.search`); its signed part is sent. */
  oauthQuery: string;
}

/**
 * The product as an OAuth 2.1 / OpenID provider, from the user's side, with the session cookie:
 * the consent page's facts and decision, and the applications the user authorized. The protocol
 * endpoints (authorize, token, register, revoke, userinfo) are the third-party client's, not this
 * client's.
 */
export interface OAuth2Api {
  /** The name, site, logo, policy and terms a client registered, for its consent page (`not_found` for an unknown client). */
  publicClient(query: { clientId: string }): Promise<PublicClient>;
  /**
   * The consent page's decision; answers where the browser goes next (the authorization
   * request's resume step, which redirects to the client with a code or `error=access_denied`):
   * the page calls `location.assign` with it. Refusals: `invalid_signature` (401) for a query
   * altered, expired or not identity's (this does not end the session); `bad_request` for a
   * request that expired or began in another browser; `forbidden` for another account's request
   * or an impersonation session.
   */
  consent(decision: ConsentDecision): Promise<string>;
  /** The applications the user authorized, newest first. */
  getConsents(): Promise<AuthorizedApp[]>;
  /** One of them (`not_found` for another user's, an expired or an unknown id). */
  getConsent(query: { id: string }): Promise<AuthorizedApp>;
  /**
   * Revokes an application: every consent the user gave that client ends, with its codes and
   * refresh tokens at once; access tokens it already holds (JWTs) work until they expire
   * (identity's OAUTH_ACCESS_TOKEN_TTL). The next authorization request asks for consent again.
   */
  deleteConsent(body: { id: string }): Promise<void>;
}

/** Builds the {@link OAuth2Api} over a transport. */
export function oauth2Api(http: Http): OAuth2Api {
  return {
    publicClient: ({ clientId }) => identityJson(http, publicClientSchema, "/oauth2/public-client", { query: { client_id: clientId } }),
    consent: async ({ accept, scope, oauthQuery }) => {
      // With no signature, identity's answer is the same invalid_signature: sending the raw query lets it say so.
      const body = { accept, ...(scope !== undefined ? { scope } : {}), oauth_query: signedConsentQuery(oauthQuery) ?? oauthQuery };
      return (await identityJson(http, consentResponse, "/oauth2/consent", { body })).redirect_uri;
    },
    getConsents: () => identityJson(http, oauthConsentsResponse, "/oauth2/get-consents"),
    getConsent: ({ id }) => identityJson(http, authorizedAppSchema, "/oauth2/get-consent", { query: { id } }),
    deleteConsent: async ({ id }) => {
      await identityJson(http, deleteConsentResponse, "/oauth2/delete-consent", { body: { id } });
    },
  };
}
