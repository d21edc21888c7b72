import { AppError } from "@app/http-kit";
import type { Request, Response } from "express";
import type Provider from "oidc-provider";
import { authorizingUserOf, identitySessionOf } from "./identity-session.js";
import { OAUTH_PATHS, WEB_PAGES } from "./settings.js";
import type { ConsentQuery } from "./signed-query.js";

/** What the interaction step needs besides the provider. */
export interface InteractionSettings {
  /** `{BASE_URL}`: where the browser comes back to after signing in. */
  baseUrl: string;
  /** The web app's origin (its sign-in and consent pages). */
  webOrigin: string;
  consentQuery: ConsentQuery;
  now: () => number;
}

const EXPIRED = "this authorization request expired or was started in another browser: start again from the application";

/**
 * Hands a request to oidc-provider's Koa app with Express's verdict on forwarded headers
 * (TRUST_PROXY): the protocol and client address Express trusts, and no forwarded host (the
 * issuer names the host). The provider trusts these headers (provider.ts sets `proxy`).
 */
export function forKoa(req: Request): void {
  req.headers["x-forwarded-proto"] = req.protocol;
  req.headers["x-forwarded-for"] = req.ip ?? "";
  delete req.headers["x-forwarded-host"];
}

/**
 * Before an authorization request reaches oidc-provider: its own session of this browser, when it
 * names another user than the identity session (or the identity session ended), is ended, so a
 * product sign-out or a switch of account is never outlived by it (the request then signs in
 * afresh through the interaction step).
 */
export async function endStaleSession(provider: Provider, req: Request, res: Response): Promise<void> {
  const session = await provider.Session.get(provider.app.createContext(req, res));
  if (session.accountId !== undefined && session.accountId !== authorizingUserOf(req)) await session.destroy();
}

/**
 * Identity's step between oidc-provider and the web app (`interactions.url`, reached with the
 * interaction cookie oidc-provider set): without an identity session, the web app's sign-in page,
 * which comes back here (`callbackURL`); with one, the login is finished for its user; a consent to
 * ask goes to the web app's consent page with the signed query. An impersonation session, a user
 * other than the one the request started with, and a `prompt=login` or `max_age` the session is
 * too old for end the request with an error at the client.
 */
export async function interactionStep(
  provider: Provider,
  settings: InteractionSettings,
  uid: string,
  req: Request,
  res: Response,
): Promise<void> {
  const interaction = await provider.interactionDetails(req, res).catch(() => undefined);
  if (!interaction || interaction.uid !== uid) throw new AppError("bad_request", EXPIRED);
  const active = identitySessionOf(req);
  const finish = (result: Record<string, unknown>) => provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
  const fail = (error: string, description: string) => finish({ error, error_description: description });

  if (!active) {
    const signIn = new URL(WEB_PAGES.signIn, settings.webOrigin);
    signIn.searchParams.set("callbackURL", `${settings.baseUrl}${OAUTH_PATHS.interaction}/${uid}`);
    res.redirect(303, signIn.href);
    return;
  }
  if (authorizingUserOf(req) === undefined) return fail("access_denied", "an impersonation session cannot authorize applications");
  const userId = active.user.id;
  const startedWith = interaction.session?.accountId;
  if (startedWith !== undefined && startedWith !== userId) {
    return fail("login_required", "the signed-in account changed during the authorization request");
  }

  if (interaction.prompt.name === "login") {
    // prompt=login wants a sign-in after the second the request started in; max_age, one at most that old.
    const reasons = new Set(interaction.prompt.reasons);
    const signedInAt = Math.floor(active.session.createdAt.getTime() / 1000);
    const startedAt = typeof interaction.iat === "number" ? interaction.iat : 0;
    const maxAge = Number(interaction.prompt.details.max_age);
    const age = Math.floor(settings.now() / 1000) - signedInAt;
    if ((reasons.has("login_prompt") && signedInAt <= startedAt) || (reasons.has("max_age") && Number.isFinite(maxAge) && age > maxAge)) {
      return fail("login_required", "the application asked for a more recent sign-in: sign out, sign in again and retry");
    }
    return finish({ login: { accountId: userId, ts: signedInAt } });
  }
  if (interaction.prompt.name !== "consent") return fail("interaction_required", `the ${interaction.prompt.name} step is not offered`);

  const fields: Record<string, string> = { uid, client_id: String(interaction.params.client_id ?? "") };
  if (typeof interaction.params.scope === "string") fields.scope = interaction.params.scope;
  if (typeof interaction.params.resource === "string") fields.resource = interaction.params.resource;
  const query = settings.consentQuery.sign(fields, interaction.exp, settings.now());
  res.redirect(303, `${new URL(WEB_PAGES.consent, settings.webOrigin).href}?${query}`);
}

const words = (value: unknown) => (typeof value === "string" ? value.split(" ").filter(Boolean) : []);

/**
 * The consent page's answer (POST oauth2/consent): the interaction its signed query names, for
 * the session's user only; `accept` grants the requested scopes (or the subset `scope` names;
 * `openid` stays), recording the others as declined so they are not asked again, through
 * oidc-provider's Grant; a refusal ends the request with `access_denied`. The Grant is saved
 * through `saveGrant`, which writes the consent's `oauth_consent_granted` event with it in one
 * transaction (routes.ts). Returns where the browser goes next: oidc-provider's resume step,
 * which redirects to the client.
 */
export async function decideConsent(
  provider: Provider,
  fields: Record<string, string>,
  userId: string,
  decision: { accept: boolean; scope?: string | undefined },
  saveGrant: (save: () => Promise<string>, granted: { clientId: string; scopes: string[] }) => Promise<string>,
): Promise<string> {
  const interaction = fields.uid ? await provider.Interaction.find(fields.uid) : undefined;
  if (interaction?.prompt.name !== "consent" || interaction.params.client_id !== fields.client_id) {
    throw new AppError("bad_request", EXPIRED);
  }
  if (interaction.session?.accountId !== userId) throw new AppError("forbidden", "this authorization request is another account's");
  const requested = new Set(words(interaction.params.scope));
  let accepted = requested;
  if (decision.scope !== undefined) {
    const chosen = words(decision.scope);
    const unknown = chosen.find((scope) => !requested.has(scope));
    if (unknown !== undefined) throw new AppError("bad_request", `scope ${unknown} was not requested`);
    accepted = new Set(requested.has("openid") ? ["openid", ...chosen] : chosen);
  }

  if (!decision.accept) {
    interaction.result = { error: "access_denied", error_description: "the user refused the authorization" };
  } else {
    const clientId = String(interaction.params.client_id);
    const found = interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined;
    const grant =
      found && found.accountId === userId && found.clientId === clientId ? found : new provider.Grant({ accountId: userId, clientId });
    const { details } = interaction.prompt;
    const split = (scopes: readonly string[]) => ({
      granted: scopes.filter((s) => accepted.has(s)).join(" "),
      declined: scopes.filter((s) => !accepted.has(s)).join(" "),
    });
    const oidc = split(details.missingOIDCScope ?? []);
    if (oidc.granted) grant.addOIDCScope(oidc.granted);
    if (oidc.declined) grant.rejectOIDCScope(oidc.declined);
    if (details.missingOIDCClaims?.length) grant.addOIDCClaims(details.missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(details.missingResourceScopes ?? {})) {
      const { granted, declined } = split(scopes);
      if (granted) grant.addResourceScope(resource, granted);
      if (declined) grant.rejectResourceScope(resource, declined);
    }
    const granted = { clientId, scopes: [...accepted].filter((scope) => requested.has(scope)) };
    interaction.result = { ...interaction.lastSubmission, consent: { grantId: await saveGrant(() => grant.save(), granted) } };
  }
  await interaction.save(Math.max(1, interaction.exp - Math.floor(Date.now() / 1000)));
  return interaction.returnTo;
}
