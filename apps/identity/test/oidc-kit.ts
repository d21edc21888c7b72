import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";
import { parseSetCookie } from "set-cookie-parser";

/** Claims of a test account at the provider. */
export interface TestAccount {
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
}

/** A real OpenID Provider (panva's oidc-provider) listening on 127.0.0.1, with one registered client. */
export interface TestProvider {
  issuer: string;
  /** The account the next login interaction signs in as. */
  loginAs(account: TestAccount): void;
  close(): Promise<void>;
}

/** An HTTP server listening on a free loopback port. */
export interface Served {
  server: Server;
  baseUrl: string;
  close(): Promise<void>;
}

/** Serves `app`, or nothing until a handler is added with `server.on("request", …)`, on a free loopback port. */
export async function serve(app?: RequestListener): Promise<Served> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    server,
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Starts an OpenID Provider. Its interactions (login, consent) answer at once for the account
 * set by `loginAs`, as a user who types their password and clicks "Allow" would: the test drives
 * the redirects and the provider's own session, state, PKCE, nonce and token checks stay real.
 */
export async function startProvider(
  client: { clientId: string; clientSecret: string; redirectUri: string },
  /** Another client registered with the same redirect URI (a token issued to it is not identity's). */
  alsoClientId?: string,
): Promise<TestProvider> {
  const { server, baseUrl: issuer, close } = await serve();
  let current: TestAccount | undefined;
  const accounts = new Map<string, TestAccount>();
  const provider = new Provider(issuer, {
    clients: [client.clientId, ...(alsoClientId ? [alsoClientId] : [])].map((id) => ({
      client_id: id,
      client_secret: client.clientSecret,
      redirect_uris: [client.redirectUri],
      grant_types: ["authorization_code"],
      response_types: ["code"],
    })),
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    cookies: { keys: ["oidc-kit-cookie-key-0123456789abcdef"] },
    pkce: { required: () => true },
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 600, IdToken: 600, Interaction: 600, Session: 600 },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx: unknown, id: string) => {
      const account = accounts.get(id);
      return account ? { accountId: id, claims: () => ({ ...account }) } : undefined;
    },
  });
  const handle = provider.callback();
  server.on("request", async (req, res) => {
    if (!req.url?.startsWith("/interaction/")) return handle(req, res);
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === "login") {
        if (!current) throw new Error("oidc-kit: call loginAs() first");
        accounts.set(current.sub, current);
        return await provider.interactionFinished(req, res, { login: { accountId: current.sub } }, { mergeWithLastSubmission: false });
      }
      const grant = new provider.Grant({ accountId: details.session?.accountId ?? "", clientId: String(details.params.client_id) });
      const missingScope = details.prompt.details.missingOIDCScope as string[] | undefined;
      const missingClaims = details.prompt.details.missingOIDCClaims as string[] | undefined;
      if (missingScope) grant.addOIDCScope(missingScope.join(" "));
      if (missingClaims) grant.addOIDCClaims(missingClaims);
      await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
    } catch (error) {
      res.statusCode = 500;
      res.end(String(error));
    }
  });
  return {
    issuer,
    loginAs(account) {
      current = account;
    },
    close,
  };
}

/** identity's registration at the test provider. */
export const CLIENT = { clientId: "identity-test", clientSecret: "identity-test-secret-0123456789" };

/** An identity app served on a free loopback port, with a real OpenID Provider configured as "local". */
export interface ProviderStack<K> {
  baseUrl: string;
  provider: TestProvider;
  kit: K;
  close(): Promise<void>;
}

/**
 * Starts the server first (its URL is identity's BASE_URL and the provider's redirect URI), then the
 * provider, then the app `start` builds with the provider's settings in `env`.
 */
export async function providerStack<K extends { app: RequestListener; close(): Promise<void> }>(
  start: (env: Record<string, string>) => Promise<K>,
): Promise<ProviderStack<K>> {
  const served = await serve();
  const { baseUrl } = served;
  // A failed start stops what did start, so no server holds the test process open.
  const provider = await startProvider({ ...CLIENT, redirectUri: `${baseUrl}/api/auth/callback/local` }).catch(async (error) => {
    await served.close();
    throw error;
  });
  const env = {
    BASE_URL: baseUrl,
    OIDC_PROVIDERS: "local",
    OIDC_LOCAL_ISSUER: provider.issuer,
    OIDC_LOCAL_CLIENT_ID: CLIENT.clientId,
    OIDC_LOCAL_CLIENT_SECRET: CLIENT.clientSecret,
  };
  const kit = await start(env).catch(async (error) => {
    await served.close();
    await provider.close();
    throw error;
  });
  served.server.on("request", kit.app);
  return {
    baseUrl,
    provider,
    kit,
    async close() {
      await served.close();
      await provider.close();
      await kit.close();
    },
  };
}

/**
 * A browser without a window: fetch with redirects followed by hand and a cookie jar per
 * host and port (each server here is one of them), so every hop can be inspected or altered.
 */
export class Browser {
  readonly jar = new Map<string, Map<string, string>>();

  #cookies(url: URL): Map<string, string> {
    let cookies = this.jar.get(url.host);
    if (!cookies) {
      cookies = new Map();
      this.jar.set(url.host, cookies);
    }
    return cookies;
  }

  cookie(url: string, name: string): string | undefined {
    return this.#cookies(new URL(url)).get(name);
  }

  setCookie(url: string, name: string, value: string): void {
    this.#cookies(new URL(url)).set(name, value);
  }

  async request(url: string | URL, init: RequestInit = {}): Promise<Response> {
    const target = new URL(url);
    const cookies = this.#cookies(target);
    const headers = new Headers(init.headers);
    if (cookies.size) headers.set("cookie", [...cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    const res = await fetch(target, { ...init, headers, redirect: "manual" });
    for (const c of parseSetCookie(res.headers.getSetCookie())) {
      const expired = (c.expires && c.expires.getTime() <= Date.now()) || (c.maxAge !== undefined && c.maxAge <= 0);
      if (expired) cookies.delete(c.name);
      else cookies.set(c.name, c.value);
    }
    return res;
  }

  /** Follows redirects from `url` until `stop` says a location is where the test takes over. */
  async follow(url: string | URL, stop: (next: URL) => boolean): Promise<URL> {
    let current = new URL(url);
    for (let hop = 0; hop < 20; hop++) {
      const res = await this.request(current);
      const location = res.headers.get("location");
      if (res.status < 300 || res.status >= 400 || !location) {
        throw new Error(`no redirect from ${current.href}: ${res.status} ${await res.text()}`);
      }
      await res.body?.cancel();
      const next = new URL(location, current);
      if (stop(next)) return next;
      current = next;
    }
    throw new Error("too many redirects");
  }
}
