/**
 * The local OpenID Provider of a development stack (`LOCAL_IDP=true pnpm start`): panva's
 * oidc-provider (the certified provider the identity tests use, apps/identity/test/oidc-kit.ts)
 * with its built-in development login form, run inside the launcher like the development mailbox
 * (dev-mail.ts), so a fresh machine can try "Continue with Local IdP" and stopping the stack
 * stops it. Identity talks to it as to any provider (docs/sign-in-providers.md).
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

/** The provider id identity gets (`OIDC_PROVIDERS=…,local`): the callback is `/api/auth/callback/local`. */
export const LOCAL_IDP_ID = "local";

/** The demo accounts: the login form accepts any of these emails, with any password. */
export const DEMO_ACCOUNTS = [
  { sub: "ada", email: "ada@example.com", email_verified: true, name: "Ada Lovelace" },
  { sub: "bob", email: "bob@example.com", email_verified: true, name: "Bob Example" },
] as const;

/** A running local provider and the one client registered for identity. */
export interface LocalIdp {
  issuer: string;
  clientId: string;
  clientSecret: string;
  close(): Promise<void>;
}

/** True when the launcher runs the local provider: only when asked for, never in production. */
export function wantsLocalIdp(env: Record<string, string | undefined>): boolean {
  return env.LOCAL_IDP === "true" && env.NODE_ENV !== "production";
}

/** Identity's provider variables for the local provider, appended to the operator's providers. */
export function identityIdpEnv(env: Record<string, string | undefined>, idp: LocalIdp): Record<string, string> {
  const configured = (env.OIDC_PROVIDERS ?? "")
    .split(",")
    .map((id) => id.trim())
    .filter((id) => id && id !== LOCAL_IDP_ID);
  return {
    OIDC_PROVIDERS: [...configured, LOCAL_IDP_ID].join(","),
    OIDC_LOCAL_ISSUER: idp.issuer,
    OIDC_LOCAL_CLIENT_ID: idp.clientId,
    OIDC_LOCAL_CLIENT_SECRET: idp.clientSecret,
    OIDC_LOCAL_NAME: "Local IdP",
  };
}

/** The console line naming the provider and who can sign in there. */
export function localIdpLine(idp: LocalIdp): string {
  return `local OpenID Provider: ${idp.issuer} (sign in as ${DEMO_ACCOUNTS.map((a) => a.email).join(" or ")}, any password)`;
}

function findDemo(login: string) {
  return DEMO_ACCOUNTS.find((a) => a.email === login.trim().toLowerCase() || a.sub === login);
}

/**
 * Starts the provider on 127.0.0.1 (`port` 0: a free one) with one client whose redirect URI is
 * identity's callback at `baseUrl`. Client id, secret and cookie key are new on every run, so
 * nothing of a previous run is trusted. The client is first-party: `loadExistingGrant` grants it
 * the scopes it asks for, so the user sees the login form and no consent screen.
 */
export async function startLocalIdp(options: { baseUrl: string; port: number }): Promise<LocalIdp> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, "127.0.0.1", () => resolve());
  });
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientId = `local-${randomBytes(8).toString("hex")}`;
  const clientSecret = randomBytes(32).toString("base64url");
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [`${options.baseUrl.replace(/\/+$/, "")}/api/auth/callback/${LOCAL_IDP_ID}`],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    cookies: { keys: [randomBytes(32).toString("base64url")] },
    pkce: { required: () => true },
    // Identity's flow cookie lives ten minutes (docs/sign-in-providers.md): the provider's steps fit in it.
    ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 3600, IdToken: 600, Interaction: 600, Session: 3600 },
    features: { devInteractions: { enabled: true } },
    // The development login form takes any login as the account id: only the demo accounts exist.
    findAccount: (_ctx: unknown, id: string) => {
      const account = findDemo(id);
      return account ? { accountId: id, claims: () => ({ ...account, sub: id }) } : undefined;
    },
    loadExistingGrant: async (ctx: {
      oidc: {
        client: { clientId: string };
        session: { accountId: string; grantIdFor(id: string): string | undefined };
        provider: Provider;
      };
    }) => {
      const { client, session, provider: op } = ctx.oidc;
      const grantId = session.grantIdFor(client.clientId);
      if (grantId) return op.Grant.find(grantId);
      const grant = new op.Grant({ accountId: session.accountId, clientId: client.clientId });
      grant.addOIDCScope("openid email profile");
      await grant.save();
      return grant;
    },
  });
  const handle = provider.callback();
  server.on("request", handle);
  let closing: Promise<void> | undefined;
  return {
    issuer,
    clientId,
    clientSecret,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
