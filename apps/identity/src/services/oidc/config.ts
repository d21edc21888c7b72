/**
 * Sign-in providers from the environment (docs/sign-in-providers.md): `OIDC_PROVIDERS=<id>[,<id>…]`
 * with `OIDC_<ID>_ISSUER`, `OIDC_<ID>_CLIENT_ID`, `OIDC_<ID>_CLIENT_SECRET` and optional
 * `OIDC_<ID>_SCOPES`, `OIDC_<ID>_NAME`; GitHub (OAuth 2.0, no discovery) by `GITHUB_CLIENT_ID` and
 * `GITHUB_CLIENT_SECRET`. Parsed once by src/config.ts, which reports every problem at start-up.
 */

/** One configured provider. */
export interface SocialProviderConfig {
  /** The id in `/api/auth/callback/<id>` and in `account.provider_id`. */
  id: string;
  /** Button label. */
  name: string;
  kind: "oidc" | "github";
  /** The OpenID Provider's issuer (discovery), or GitHub's fixed one. */
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
  /** A plain-http issuer on a loopback address, accepted only outside production. */
  allowInsecure: boolean;
}

/** A problem to report against an environment variable. */
export interface ProviderProblem {
  variable: string;
  message: string;
}

const ID = /^[a-z0-9][a-z0-9-]{0,31}$/;
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);
export const DEFAULT_SCOPES = "openid email profile";
export const GITHUB_ID = "github";

function text(env: Record<string, unknown>, key: string): string | undefined {
  const value = env[key];
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

/** `OIDC_<ID>_` for an id (`my-idp` → `OIDC_MY_IDP_`). */
export function variablePrefix(id: string): string {
  return `OIDC_${id.toUpperCase().replaceAll("-", "_")}_`;
}

/**
 * An issuer must be https; outside production a loopback http issuer is allowed so a provider
 * started on this machine (tests, a local IdP) works.
 */
function checkIssuer(raw: string, production: boolean): { url?: URL; insecure: boolean; message?: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { insecure: false, message: "must be an absolute URL" };
  }
  if (url.protocol === "https:") return { url, insecure: false };
  if (url.protocol === "http:" && LOOPBACK.has(url.hostname)) {
    if (production) return { insecure: true, message: "must use https in production" };
    return { url, insecure: true };
  }
  return { insecure: false, message: "must use https (http only on 127.0.0.1 or localhost outside production)" };
}

/** Parses the providers; returns them and every problem found (none: the list is usable). */
export function parseSocialProviders(
  env: Record<string, unknown>,
  production: boolean,
): { providers: SocialProviderConfig[]; problems: ProviderProblem[] } {
  const providers: SocialProviderConfig[] = [];
  const problems: ProviderProblem[] = [];
  const ids = (text(env, "OIDC_PROVIDERS") ?? "")
    .split(",")
    .map((v) => v.trim().toLowerCase())
    .filter(Boolean);
  for (const id of new Set(ids)) {
    if (!ID.test(id)) {
      problems.push({ variable: "OIDC_PROVIDERS", message: `"${id}" is not a valid id (a-z, 0-9 and -, at most 32)` });
      continue;
    }
    if (id === GITHUB_ID) {
      problems.push({
        variable: "OIDC_PROVIDERS",
        message: `"${GITHUB_ID}" is the GitHub preset: set GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET instead`,
      });
      continue;
    }
    const prefix = variablePrefix(id);
    const issuer = text(env, `${prefix}ISSUER`);
    const clientId = text(env, `${prefix}CLIENT_ID`);
    const clientSecret = text(env, `${prefix}CLIENT_SECRET`);
    for (const [suffix, value] of [
      ["ISSUER", issuer],
      ["CLIENT_ID", clientId],
      ["CLIENT_SECRET", clientSecret],
    ] as const) {
      if (!value) problems.push({ variable: `${prefix}${suffix}`, message: `is required for provider "${id}"` });
    }
    if (!issuer || !clientId || !clientSecret) continue;
    const checked = checkIssuer(issuer, production);
    if (!checked.url) {
      problems.push({ variable: `${prefix}ISSUER`, message: checked.message ?? "is invalid" });
      continue;
    }
    providers.push({
      id,
      name: text(env, `${prefix}NAME`) ?? id,
      kind: "oidc",
      // Discovery compares the issuer string exactly, so it is kept as configured.
      issuer,
      clientId,
      clientSecret,
      scopes: text(env, `${prefix}SCOPES`) ?? DEFAULT_SCOPES,
      allowInsecure: checked.insecure,
    });
  }
  const githubId = text(env, "GITHUB_CLIENT_ID");
  const githubSecret = text(env, "GITHUB_CLIENT_SECRET");
  if (githubId && githubSecret) {
    providers.push({
      id: GITHUB_ID,
      name: "GitHub",
      kind: "github",
      issuer: "https://github.com",
      clientId: githubId,
      clientSecret: githubSecret,
      scopes: "read:user user:email",
      allowInsecure: false,
    });
  } else if (githubId || githubSecret) {
    problems.push({
      variable: githubId ? "GITHUB_CLIENT_SECRET" : "GITHUB_CLIENT_ID",
      message: "GitHub sign-in needs both GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET",
    });
  }
  return { providers, problems };
}
