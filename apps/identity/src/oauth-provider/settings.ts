import { AUTH_BASE_PATH } from "@app/contracts";

/** Where better-auth's oauth-provider plugin puts its routes, under the auth base path. */
const OAUTH2 = `${AUTH_BASE_PATH}/oauth2`;

/** The authorization server's paths (better-auth 1.7's `@better-auth/oauth-provider` names). */
export const OAUTH_PATHS = {
  authorize: `${OAUTH2}/authorize`,
  token: `${OAUTH2}/token`,
  register: `${OAUTH2}/register`,
  userinfo: `${OAUTH2}/userinfo`,
  revoke: `${OAUTH2}/revoke`,
  consent: `${OAUTH2}/consent`,
  getConsents: `${OAUTH2}/get-consents`,
  getConsent: `${OAUTH2}/get-consent`,
  deleteConsent: `${OAUTH2}/delete-consent`,
  publicClient: `${OAUTH2}/public-client`,
  /** Identity's own step between oidc-provider and the web app's pages (sign-in, consent). */
  interaction: `${OAUTH2}/interaction`,
  /** The contract's key set (routes/auth-routes.ts): the advertised `jwks_uri`. */
  jwks: `${AUTH_BASE_PATH}/jwks`,
  /** Routes of features that stay off, named so that nothing of the provider lives outside /oauth2. */
  endSession: `${OAUTH2}/end-session`,
  introspection: `${OAUTH2}/introspect`,
  pushedAuthorizationRequest: `${OAUTH2}/par`,
  deviceAuthorization: `${OAUTH2}/device/code`,
  codeVerification: `${OAUTH2}/device`,
  backchannelAuthentication: `${OAUTH2}/ciba`,
} as const;

/** The discovery documents, at the root as RFC 8414 and OpenID Connect Discovery place them. */
export const WELL_KNOWN = {
  openid: "/.well-known/openid-configuration",
  authorizationServer: "/.well-known/oauth-authorization-server",
} as const;

/** The web app's pages the authorization steps send the browser to (on the web origin). */
export const WEB_PAGES = { signIn: "/sign-in", consent: "/oauth/consent" } as const;

/** Scopes of the MCP server (`/api/mcp`): resource scopes, carried by its access tokens. */
export const MCP_SCOPES = ["mcp:read", "mcp:write"] as const;

/** Every scope the server grants. */
export const SCOPES = ["openid", "profile", "email", "offline_access", ...MCP_SCOPES] as const;

/** The one resource server (RFC 8707): the API's MCP endpoint. */
export function mcpResource(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/api/mcp`;
}

/** Lifetimes (seconds) besides the access token's (OAUTH_ACCESS_TOKEN_TTL). */
export const LIFETIMES = {
  authorizationCode: 60,
  /** Signing in and consenting, from the authorization request on. */
  interaction: 15 * 60,
  refreshToken: 30 * 24 * 60 * 60,
  /** A consent (oidc-provider Grant): remembered this long, and refresh tokens live within it. */
  grant: 365 * 24 * 60 * 60,
} as const;
