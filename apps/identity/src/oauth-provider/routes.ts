import { hkdfSync } from "node:crypto";
import {
  oauthClientParams,
  oauthConsentBody,
  oauthConsentIdBody,
  oauthConsentIdQuery,
  oauthConsentResponse,
  oauthConsentSchema,
  oauthConsentsResponse,
  oauthDeleteConsentResponse,
  oauthInteractionParams,
  oauthPublicClientQuery,
  oauthPublicClientResponse,
  SESSION_COOKIE_SUFFIX,
} from "@app/contracts";
import { type AnyRoute, AppError, defineRoute } from "@app/http-kit";
import type { Request, Response } from "express";
import type { FeatureDeps } from "../features.js";
import { signedInUser } from "../middleware/guards.js";
import { clientKey } from "../middleware/rate-limits.js";
import { recordEvent, requestFacts } from "../security-events/record.js";
import { homeOf } from "../views/link-pages.js";
import { accountFinder } from "./accounts.js";
import { Consents } from "./consents.js";
import { identitySessionGuard } from "./identity-session.js";
import { decideConsent, endStaleSession, forKoa, interactionStep } from "./interactions.js";
import { type BuiltProvider, createProvider, ProviderHost } from "./provider.js";
import { mcpResource, OAUTH_PATHS, WELL_KNOWN } from "./settings.js";
import { ConsentQuery } from "./signed-query.js";
import type { OAuthStore } from "./store.js";

const TAG = "oauth-provider";

/**
 * The routes of the product as an OAuth 2.1 authorization server and OpenID provider (panva's
 * oidc-provider does the protocol; provider.ts): discovery at the root, the protocol endpoints
 * where better-auth's oauth-provider plugin puts them (handed to oidc-provider's Koa app as they
 * arrive, bodies unread), and identity's own steps: the interaction step (sign-in and consent in
 * the web app), the consent decision, the user's authorized applications and the public facts of
 * a client. Every route starts with the origin check and no-store. `store` (store.ts) is the
 * provider's state; app.ts builds it, and the server's housekeeping purges it.
 */
export function oauthProviderRoutes(deps: FeatureDeps, store: OAuthStore): AnyRoute[] {
  const { config, guards, service, prisma, logger, now, cookie } = deps;
  const consents = new Consents(prisma);
  const cookieKey = Buffer.from(hkdfSync("sha256", config.authSecret, "token-auth-service", "oauth-provider-cookies", 32));
  const host = new ProviderHost(
    () => service.keys.view(),
    (key) =>
      createProvider(
        {
          issuer: config.baseUrl,
          mcpResource: mcpResource(config.baseUrl),
          accessTokenTtl: config.oauthAccessTokenTtl,
          sessionTtl: Math.ceil(config.sessionTtlMs / 1000),
          cookieKeys: [cookieKey.toString("base64url")],
          cookiePrefix: config.cookieName.slice(0, -SESSION_COOKIE_SUFFIX.length),
          corsOrigins: config.corsOrigins,
          adapter: (kind) => store.adapter(kind),
          findAccount: accountFinder(prisma, now),
          latestGrantId: (accountId, clientId) => consents.latestGrantId(accountId, clientId),
          logger,
        },
        key,
      ),
  );
  const consentQuery = new ConsentQuery(config.authSecret);
  const webOrigin = new URL(homeOf(config.corsOrigins) ?? config.baseUrl).origin;
  const interactionSettings = { baseUrl: config.baseUrl, webOrigin, consentQuery, now };
  const session = identitySessionGuard(service.sessions, cookie);
  const start = [guards.origin, guards.noStore];

  /** Hands the request to oidc-provider (`signing`: the routes that sign a token build it with the current signing key). */
  const delegate =
    (pick: () => Promise<BuiltProvider>, before?: (built: BuiltProvider, req: Request, res: Response) => Promise<void> | void) =>
    async ({ req, res }: { req: Request; res: Response }) => {
      const built = await pick();
      forKoa(req);
      await before?.(built, req, res);
      await built.handle(req, res);
    };
  /**
   * The authorization answers may be oidc-provider's `form_post` page (response_mode=form_post):
   * its inline script (oidc-provider adds its hash to script-src) posts the code to the client's
   * redirect URI, which the app-wide policy (form-action 'none') would stop.
   */
  const formPostPolicy = (res: Response) =>
    void res.setHeader(
      "content-security-policy",
      "default-src 'none'; script-src 'self'; form-action http: https:; base-uri 'none'; frame-ancestors 'none'",
    );
  const current = () => host.current();
  const signing = () => host.signing();
  const protocol = (method: "get" | "post", path: string, summary: string, pick = current) =>
    defineRoute({ method, path, tag: TAG, summary, reply: { raw: "application/json" }, guards: start, handler: delegate(pick) });

  return [
    defineRoute({
      method: "get",
      path: WELL_KNOWN.openid,
      tag: TAG,
      summary: "OpenID Connect Discovery: the provider's metadata",
      reply: { raw: "application/json" },
      guards: start,
      handler: delegate(current, (_built, _req, res) => void res.setHeader("cache-control", "public, max-age=300")),
    }),
    defineRoute({
      method: "get",
      path: WELL_KNOWN.authorizationServer,
      tag: TAG,
      summary: "RFC 8414 authorization server metadata (the OpenID document)",
      reply: { raw: "application/json" },
      guards: start,
      handler: delegate(current, (_built, req, res) => {
        req.url = WELL_KNOWN.openid;
        res.setHeader("cache-control", "public, max-age=300");
      }),
    }),
    defineRoute({
      method: "get",
      path: OAUTH_PATHS.authorize,
      tag: TAG,
      summary: "Authorization endpoint (code, PKCE S256): sign-in and consent in the web app, then the client's redirect URI",
      reply: { raw: "redirect" },
      guards: [...start, guards.cookies, session],
      handler: delegate(current, (built, req, res) => {
        formPostPolicy(res);
        return endStaleSession(built.provider, req, res);
      }),
    }),
    defineRoute({
      method: "get",
      path: `${OAUTH_PATHS.authorize}/:uid`,
      tag: TAG,
      summary: "Resumes an authorization request after its sign-in or consent step",
      params: oauthInteractionParams,
      reply: { raw: "redirect" },
      guards: [...start, guards.cookies, session],
      handler: delegate(current, (_built, _req, res) => formPostPolicy(res)),
    }),
    defineRoute({
      method: "get",
      path: `${OAUTH_PATHS.interaction}/:uid`,
      tag: TAG,
      summary: "The sign-in or consent step: the web app's page for it, or straight on with the identity session",
      params: oauthInteractionParams,
      reply: { raw: "redirect" },
      guards: [...start, guards.cookies, session],
      handler: async ({ params, req, res }) => {
        const { provider } = await host.current();
        forKoa(req);
        await interactionStep(provider, interactionSettings, params.uid, req, res);
      },
    }),
    defineRoute({
      method: "post",
      path: OAUTH_PATHS.consent,
      tag: TAG,
      summary: "The consent page's decision: where the browser goes next (the client's redirect URI, through the resume step)",
      body: oauthConsentBody,
      response: oauthConsentResponse,
      reply: "json",
      guards: [...start, guards.body, guards.sessionCookies, guards.signedIn],
      handler: async ({ body, req, res }) => {
        const fields = consentQuery.verify(body.oauth_query, now());
        if (!fields) throw new AppError("invalid_signature", "the consent page's query is not one this server signed, or it expired");
        const active = signedInUser(res);
        if (active.session.impersonatedBy !== null)
          throw new AppError("forbidden", "an impersonation session cannot authorize applications");
        const { provider } = await host.current();
        const to = await decideConsent(provider, fields, active.user.id, body, (save, granted) =>
          store.inTransaction(async (tx) => {
            const grantId = await save();
            const detail = { clientId: granted.clientId, scopes: granted.scopes.join(" ") };
            await recordEvent(tx, { type: "oauth_consent_granted", userId: active.user.id, detail }, requestFacts(req), new Date(now()));
            return grantId;
          }),
        );
        return { redirect: true as const, url: to, redirect_uri: to };
      },
    }),
    protocol("post", OAUTH_PATHS.token, "Token endpoint: authorization code (with its PKCE verifier) and refresh token grants", signing),
    defineRoute({
      method: "post",
      path: OAUTH_PATHS.register,
      tag: TAG,
      summary: "Dynamic client registration (RFC 7591): open, limited per client IP",
      reply: { raw: "application/json" },
      guards: [...start, guards.limits.oauthRegistrationPerIp],
      handler: async (ctx) => store.registrant.run(store.registrantKey(clientKey(ctx.req)), () => delegate(current)(ctx)),
    }),
    defineRoute({
      method: "get",
      path: `${OAUTH_PATHS.register}/:clientId`,
      tag: TAG,
      summary: "A registered client's metadata, with its registration access token",
      params: oauthClientParams,
      reply: { raw: "application/json" },
      guards: start,
      handler: delegate(current),
    }),
    protocol("get", OAUTH_PATHS.userinfo, "UserInfo: the claims of the access token's scopes"),
    protocol("post", OAUTH_PATHS.userinfo, "UserInfo (POST)"),
    protocol("post", OAUTH_PATHS.revoke, "Token revocation (RFC 7009): ends the token's whole authorization"),
    defineRoute({
      method: "get",
      path: OAUTH_PATHS.getConsents,
      tag: TAG,
      summary: "The applications the user authorized",
      response: oauthConsentsResponse,
      reply: "json",
      guards: [...start, guards.sessionCookies, guards.signedIn],
      handler: ({ res }) => consents.list(signedInUser(res).user.id),
    }),
    defineRoute({
      method: "get",
      path: OAUTH_PATHS.getConsent,
      tag: TAG,
      summary: "One application the user authorized",
      query: oauthConsentIdQuery,
      response: oauthConsentSchema,
      reply: "json",
      guards: [...start, guards.sessionCookies, guards.signedIn],
      handler: async ({ query, res }) => {
        const consent = await consents.get(signedInUser(res).user.id, query.id);
        if (!consent) throw new AppError("not_found", "no such authorized application");
        return consent;
      },
    }),
    defineRoute({
      method: "post",
      path: OAUTH_PATHS.deleteConsent,
      tag: TAG,
      summary: "Revokes an authorized application: its refresh tokens end at once, its access tokens at expiry",
      body: oauthConsentIdBody,
      response: oauthDeleteConsentResponse,
      reply: "json",
      guards: [...start, guards.body, guards.sessionCookies, guards.signedIn],
      handler: async ({ body, req, res }) => {
        const revoked = await consents.revoke(signedInUser(res).user.id, body.id, requestFacts(req), new Date(now()));
        if (!revoked) throw new AppError("not_found", "no such authorized application");
        return { success: true as const };
      },
    }),
    defineRoute({
      method: "get",
      path: OAUTH_PATHS.publicClient,
      tag: TAG,
      summary: "What the consent page shows of a client: its name, site, logo, policy and terms",
      query: oauthPublicClientQuery,
      response: oauthPublicClientResponse,
      reply: "json",
      guards: [...start, guards.sessionCookies, guards.signedIn],
      handler: async ({ query }) => {
        const { provider } = await host.current();
        const client = await provider.Client.find(query.client_id);
        if (!client) throw new AppError("not_found", "no such client");
        const facts = { client_name: client.clientName, client_uri: client.clientUri, logo_uri: client.logoUri };
        const more = { policy_uri: client.policyUri, tos_uri: client.tosUri };
        return {
          client_id: client.clientId,
          ...Object.fromEntries(Object.entries({ ...facts, ...more }).filter(([, v]) => typeof v === "string")),
        };
      },
    }),
  ];
}
