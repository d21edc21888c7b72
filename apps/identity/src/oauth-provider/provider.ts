import type { IncomingMessage, ServerResponse } from "node:http";
import Provider, { type Account, type Adapter, errors, interactionPolicy, type KoaContext } from "oidc-provider";
import type { Logger } from "pino";
import type { KeySetView, UsableKey } from "../services/key-set.js";
import { SCOPE_CLAIMS } from "./accounts.js";
import { authorizingUserOf } from "./identity-session.js";
import { LIFETIMES, MCP_SCOPES, OAUTH_PATHS, SCOPES } from "./settings.js";

/** What the provider is built from besides the signing key. */
export interface ProviderParts {
  /** `{BASE_URL}`: the issuer, and the origin every advertised endpoint is on. */
  issuer: string;
  /** The MCP resource (`{BASE_URL}/api/mcp`), the only one access tokens may be for. */
  mcpResource: string;
  /** OAUTH_ACCESS_TOKEN_TTL (seconds). */
  accessTokenTtl: number;
  /** Lifetime of oidc-provider's own session (seconds): the identity session's. */
  sessionTtl: number;
  /** Keys that sign oidc-provider's cookies (derived from AUTH_SECRET). */
  cookieKeys: string[];
  /** Prefix of oidc-provider's cookie names (COOKIE_PREFIX). */
  cookiePrefix: string;
  /** Origins whose browser requests the token, userinfo and revocation endpoints answer (CORS_ORIGINS). */
  corsOrigins: readonly string[];
  adapter(kind: string): Adapter;
  findAccount(ctx: unknown, id: string): Promise<Account | undefined>;
  /** The user's latest live grant to a client: a consent given in an earlier browser session. */
  latestGrantId(accountId: string, clientId: string): Promise<string | undefined>;
  logger: Logger;
}

/** The ID token's, and every access token's, algorithm: the key set's (services/key-set.ts). */
const ALG = "EdDSA";

/**
 * The login check identity adds to oidc-provider's login prompt: an authorization request goes on
 * only for the user of the identity session cookie (authorizingUserOf), so signing out of the
 * product, or in as someone else, is never outlived by oidc-provider's own session.
 */
function identityLoginCheck() {
  const { Check } = interactionPolicy;
  return new Check("identity_session", "the identity session is missing or is another user's", "login_required", (ctx: KoaContext) => {
    const user = authorizingUserOf(ctx.req);
    return user === undefined || user !== ctx.oidc.session.accountId ? Check.REQUEST_PROMPT : Check.NO_NEED_TO_PROMPT;
  });
}

/** The private JWK of the key set's signing key, as oidc-provider's `jwks` takes it. */
function privateJwk(key: UsableKey): Record<string, unknown> {
  return { ...key.privateKey.export({ format: "jwk" }), kid: key.kid, alg: ALG, use: "sig" };
}

/**
 * Builds panva's oidc-provider for identity: authorization code with PKCE S256 only, refresh
 * tokens (rotated on every use) for clients registered with that grant, open dynamic registration,
 * resource indicators with `{BASE_URL}/api/mcp` as the only resource (JWT access tokens, `at+jwt`,
 * signed with `signing`), revocation, userinfo and EdDSA ID tokens. Its endpoints sit where
 * better-auth's oauth-provider plugin puts them (settings.ts); the key set is identity's own route.
 */
export function createProvider(parts: ProviderParts, signing: UsableKey): Provider {
  const policy = interactionPolicy.base();
  policy.get("login")?.checks.add(identityLoginCheck());
  const resourceServer = {
    scope: MCP_SCOPES.join(" "),
    audience: parts.mcpResource,
    accessTokenTTL: parts.accessTokenTtl,
    accessTokenFormat: "jwt",
    jwt: { sign: { alg: ALG } },
  };
  const wantsMcp = (scope: unknown) =>
    typeof scope === "string" && scope.split(" ").some((s) => (MCP_SCOPES as readonly string[]).includes(s));
  const provider = new Provider(parts.issuer, {
    adapter: (kind: string) => parts.adapter(kind),
    jwks: { keys: [privateJwk(signing)] },
    findAccount: parts.findAccount,
    claims: { ...SCOPE_CLAIMS },
    scopes: [...SCOPES],
    responseTypes: ["code"],
    pkce: { methods: ["S256"], required: () => true },
    clientAuthMethods: ["client_secret_basic", "client_secret_post", "none"],
    clientDefaults: {
      grant_types: ["authorization_code"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
      id_token_signed_response_alg: ALG,
    },
    enabledJWA: { idTokenSigningAlgValues: [ALG] },
    // Refresh tokens go to every client registered with the refresh_token grant (MCP clients
    // rarely ask for offline_access), and are replaced on every use.
    issueRefreshToken: (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) => client.grantTypeAllowed("refresh_token"),
    rotateRefreshToken: () => true,
    // Tokens outlive oidc-provider's session: the identity session decides each new authorization.
    expiresWithSession: () => false,
    loadExistingGrant: async (ctx: KoaContext) => {
      const { oidc } = ctx;
      const accountId = oidc.session.accountId;
      const clientId = oidc.client?.clientId;
      if (!accountId || !clientId) return undefined;
      const grantId =
        oidc.result?.consent?.grantId ?? oidc.session.grantIdFor(clientId) ?? (await parts.latestGrantId(accountId, clientId));
      const grant = grantId ? await provider.Grant.find(grantId) : undefined;
      return grant && grant.accountId === accountId && grant.clientId === clientId ? grant : undefined;
    },
    interactions: { policy, url: (_ctx: unknown, interaction: { uid: string }) => `${OAUTH_PATHS.interaction}/${interaction.uid}` },
    cookies: {
      keys: parts.cookieKeys,
      names: {
        session: `${parts.cookiePrefix}.oauth_session`,
        interaction: `${parts.cookiePrefix}.oauth_interaction`,
        resume: `${parts.cookiePrefix}.oauth_resume`,
      },
      long: { httpOnly: true, sameSite: "lax" },
      short: { httpOnly: true, sameSite: "lax" },
    },
    clientBasedCORS: (_ctx: unknown, origin: string) => parts.corsOrigins.includes(origin),
    routes: {
      authorization: OAUTH_PATHS.authorize,
      token: OAUTH_PATHS.token,
      registration: OAUTH_PATHS.register,
      userinfo: OAUTH_PATHS.userinfo,
      revocation: OAUTH_PATHS.revoke,
      jwks: OAUTH_PATHS.jwks,
      end_session: OAUTH_PATHS.endSession,
      introspection: OAUTH_PATHS.introspection,
      pushed_authorization_request: OAUTH_PATHS.pushedAuthorizationRequest,
      device_authorization: OAUTH_PATHS.deviceAuthorization,
      code_verification: OAUTH_PATHS.codeVerification,
      backchannel_authentication: OAUTH_PATHS.backchannelAuthentication,
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, initialAccessToken: false, issueRegistrationAccessToken: true },
      registrationManagement: { enabled: false },
      revocation: { enabled: true },
      userinfo: { enabled: true },
      introspection: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      resourceIndicators: {
        enabled: true,
        // Asking for an MCP scope without naming a resource means the MCP server.
        defaultResource: (ctx: KoaContext, _client: unknown, oneOf?: string[]) =>
          oneOf ?? (wantsMcp(ctx.oidc.params.scope) ? parts.mcpResource : undefined),
        // The token endpoint issues for the resource the authorization named, unless told otherwise.
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, indicator: string) => {
          if (indicator !== parts.mcpResource) throw new errors.InvalidTarget(`resource ${indicator} is not served here`);
          return resourceServer;
        },
      },
    },
    ttl: {
      AccessToken: parts.accessTokenTtl,
      AuthorizationCode: LIFETIMES.authorizationCode,
      IdToken: parts.accessTokenTtl,
      RefreshToken: LIFETIMES.refreshToken,
      Grant: LIFETIMES.grant,
      Interaction: LIFETIMES.interaction,
      Session: parts.sessionTtl,
      ClientCredentials: parts.accessTokenTtl,
      DeviceCode: LIFETIMES.interaction,
      BackchannelAuthenticationRequest: LIFETIMES.interaction,
    },
    // An authorization error that cannot go back to the client (an unknown client or redirect
    // URI): the error envelope, as every other identity error.
    renderError: (ctx: KoaContext, out: { error?: string; error_description?: string }) => {
      ctx.type = "application/json; charset=utf-8";
      const error = { code: "bad_request", message: [out.error, out.error_description].filter(Boolean).join(": ") };
      ctx.body = { ok: false, error, ...error };
    },
  });
  // Express decides what a forwarded header is worth (TRUST_PROXY); forKoa hands its verdict on.
  provider.proxy = true;
  provider.on("server_error", (_ctx, error) => parts.logger.error({ err: error }, "oauth provider failed"));
  return provider;
}

/** A built provider and its request handler. */
export interface BuiltProvider {
  kid: string;
  provider: Provider;
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/**
 * The provider signing with the key set's current signing key: rebuilt when the key set's signer
 * changes (rotation, services/key-set.ts). Its state lives in PostgreSQL, so a rebuilt instance
 * carries on every flow; tokens the previous key signed stay verifiable while the key set
 * publishes it (a token lifetime past its successor's activation).
 */
export class ProviderHost {
  readonly #view: () => Promise<KeySetView>;
  readonly #make: (key: UsableKey) => Provider;
  #current: BuiltProvider | undefined;

  constructor(view: () => Promise<KeySetView>, make: (key: UsableKey) => Provider) {
    this.#view = view;
    this.#make = make;
  }

  /** The provider with the current signing key (one read of the key set): for the routes that sign. */
  async signing(): Promise<BuiltProvider> {
    const { signing } = await this.#view();
    if (this.#current?.kid === signing.kid) return this.#current;
    const provider = this.#make(signing);
    this.#current = { kid: signing.kid, provider, handle: provider.callback() };
    return this.#current;
  }

  /** The provider as last built: for the routes that sign nothing. */
  async current(): Promise<BuiltProvider> {
    return this.#current ?? this.signing();
  }
}
