import * as client from "openid-client";
import type { SocialProviderConfig } from "./config.js";

/** What identity keeps of a provider's answer about the user. */
export interface ProviderProfile {
  /** The provider's stable user id (`sub`, or GitHub's numeric id). */
  accountId: string;
  email: string | undefined;
  /** True only when the provider asserts it (`email_verified: true`, GitHub's verified primary). */
  emailVerified: boolean;
  name: string | undefined;
  image: string | undefined;
}

/** The one-time values of one authorization request. */
export interface AuthorizationChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

const GITHUB = {
  issuer: "https://github.com",
  authorization_endpoint: "https://github.com/login/oauth/authorize",
  token_endpoint: "https://github.com/login/oauth/access_token",
};
const GITHUB_API = "https://api.github.com";

function str(value: unknown): string | undefined {
  return typeof value === "string" && value ? value : undefined;
}

/**
 * One provider, through panva's openid-client (every check of the authorization response, the
 * token response and the ID token — state, PKCE, nonce, iss, aud, signature, expiry — is the
 * library's). An OpenID Provider is discovered from its issuer on first use; a failed discovery
 * is retried on the next request rather than cached.
 */
export class ProviderClient {
  readonly id: string;
  readonly name: string;
  readonly #settings: SocialProviderConfig;
  #config: Promise<client.Configuration> | undefined;

  constructor(settings: SocialProviderConfig) {
    this.#settings = settings;
    this.id = settings.id;
    this.name = settings.name;
  }

  get isOidc(): boolean {
    return this.#settings.kind === "oidc";
  }

  configuration(): Promise<client.Configuration> {
    if (!this.#config) {
      const pending = this.#discover();
      this.#config = pending;
      pending.catch(() => {
        if (this.#config === pending) this.#config = undefined;
      });
    }
    return this.#config;
  }

  #discover(): Promise<client.Configuration> {
    const s = this.#settings;
    if (s.kind === "github") return Promise.resolve(new client.Configuration(GITHUB, s.clientId, s.clientSecret));
    // allowInsecureRequests only for a loopback http issuer outside production (./config.ts).
    const options = s.allowInsecure ? { execute: [client.allowInsecureRequests] } : {};
    return client.discovery(new URL(s.issuer), s.clientId, s.clientSecret, undefined, options);
  }

  /** The authorization URL: code flow, PKCE S256, state, and a nonce for OpenID Providers. */
  async authorizationUrl(redirectUri: string, checks: AuthorizationChecks): Promise<URL> {
    const config = await this.configuration();
    const params: Record<string, string> = {
      redirect_uri: redirectUri,
      scope: this.#settings.scopes,
      response_type: "code",
      state: checks.state,
      code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: "S256",
    };
    if (this.isOidc) params.nonce = checks.nonce;
    return client.buildAuthorizationUrl(config, params);
  }

  /** Exchanges the code of `callbackUrl` and returns the user's profile (validated by openid-client). */
  async exchange(callbackUrl: URL, redirectUri: string, checks: AuthorizationChecks): Promise<ProviderProfile> {
    const config = await this.configuration();
    const tokens = await client.authorizationCodeGrant(
      config,
      callbackUrl,
      {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        ...(this.isOidc ? { expectedNonce: checks.nonce, idTokenExpected: true } : {}),
      },
      { redirect_uri: redirectUri },
    );
    if (!this.isOidc) return this.#githubProfile(config, tokens.access_token);
    const claims = tokens.claims();
    if (!claims) throw new client.ClientError("the provider returned no ID token");
    let info: Record<string, unknown> = { ...claims };
    // Many providers put email and name only in userinfo when the code flow is used.
    if (str(claims.email) === undefined && config.serverMetadata().userinfo_endpoint) {
      // fetchUserInfo checks that userinfo's `sub` is the ID token's.
      info = { ...claims, ...(await client.fetchUserInfo(config, tokens.access_token, claims.sub)) };
    }
    return {
      accountId: claims.sub,
      email: str(info.email)?.toLowerCase(),
      emailVerified: info.email_verified === true,
      name: str(info.name) ?? str(info.preferred_username),
      image: str(info.picture),
    };
  }

  /** GitHub has no ID token: the user and their verified primary email come from its REST API. */
  async #githubProfile(config: client.Configuration, accessToken: string): Promise<ProviderProfile> {
    const get = async (path: string): Promise<unknown> => {
      const headers = new Headers({ accept: "application/vnd.github+json", "user-agent": "identity" });
      const res = await client.fetchProtectedResource(config, accessToken, new URL(path, GITHUB_API), "GET", null, headers);
      if (!res.ok) throw new client.ClientError(`GitHub answered ${res.status} to ${path}`);
      return res.json();
    };
    const user = (await get("/user")) as Record<string, unknown>;
    const emails = (await get("/user/emails")) as Array<{ email?: unknown; primary?: unknown; verified?: unknown }>;
    const primary = Array.isArray(emails) ? emails.find((e) => e.primary === true) : undefined;
    const id = user.id;
    if (typeof id !== "number" && typeof id !== "string") throw new client.ClientError("GitHub returned no user id");
    return {
      accountId: String(id),
      email: str(primary?.email)?.toLowerCase() ?? str(user.email)?.toLowerCase(),
      emailVerified: primary?.verified === true,
      name: str(user.name) ?? str(user.login),
      image: str(user.avatar_url),
    };
  }
}
