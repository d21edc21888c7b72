import { createVerifier, type Verifier } from "@app/auth-verify";
import { MCP_SCOPES, type McpScope } from "@app/contracts";
import { AppError, aroundGuard, type Guard } from "@app/http-kit";
import type { Request } from "express";
import { type AuthUser, authorizationOf, createAuthenticate, toAuthError } from "../entry/authenticate.js";

/** What an MCP access token grants: its user (on `req.auth`), the client it was issued to and its scopes. */
export interface McpGrant {
  clientId: string;
  scopes: ReadonlySet<McpScope>;
}

declare global {
  namespace Express {
    interface Request {
      /** Set by the MCP bearer guard once an access token of the MCP resource verified. */
      mcpGrant?: McpGrant;
    }
  }
}

/** Where the MCP server is and who issues its tokens (ApiConfig.mcpServer). */
export interface McpResource {
  resource: string;
  metadataUrl: string;
  issuer: string;
}

/** The `typ` of an OAuth 2.0 access token in JWT form (RFC 9068 section 2.1). */
export const ACCESS_TOKEN_TYPE = "at+jwt";

/**
 * The verifier of the MCP server's access tokens: the contract's key set (shared with the business
 * routes' verifier, so a key pushed or refetched serves both), `iss` the authorization server,
 * `aud` the resource, `typ` at+jwt. A get-session JWT (typ JWT, another audience) is refused
 * here, and an access token by the business routes' verifier (typ JWT only): no token opens both.
 */
export function mcpVerifier(contract: Verifier, resource: McpResource, now?: () => number): Verifier {
  return createVerifier({
    keySet: contract.keySet,
    issuer: resource.issuer,
    audience: resource.resource,
    tokenType: ACCESS_TOKEN_TYPE,
    ...(now ? { now } : {}),
  });
}

/** A quoted-string parameter value of a challenge (RFC 9110 section 11.2): no quote or backslash inside. */
const quoted = (value: string) => `"${value.replace(/["\\]/g, "'")}"`;

/**
 * The `WWW-Authenticate` challenge of the resource (RFC 6750 section 3, RFC 9728 section 5.1): the
 * metadata address, from which a client finds the authorization server by itself, the scopes to
 * ask for, and the error when a token was presented.
 */
export function challenge(resource: McpResource, error?: { code: string; description: string }, scopes: readonly string[] = MCP_SCOPES) {
  const parts = [`resource_metadata=${quoted(resource.metadataUrl)}`, `scope=${quoted(scopes.join(" "))}`];
  if (error) parts.unshift(`error=${quoted(error.code)}`, `error_description=${quoted(error.description)}`);
  return `Bearer ${parts.join(", ")}`;
}

/**
 * A refused token as the resource answers it: the verifier's code and status (401, 503 while no key
 * set can be had), and the challenge. A request without credentials gets no error attribute
 * (RFC 6750 section 3.1).
 */
function refusal(resource: McpResource, error: unknown): AppError {
  const refused = toAuthError(error);
  if (refused.status !== 401) return refused;
  const header =
    refused.code === "missing_token" ? challenge(resource) : challenge(resource, { code: "invalid_token", description: refused.message });
  return new AppError(refused.code, refused.message, { headers: { "WWW-Authenticate": header }, cause: refused });
}

/** The grant of verified claims: `client_id` must be there (RFC 9068 section 2.2); unknown scopes are ignored. */
function grantOf(user: AuthUser): McpGrant {
  const claims = user.claims as Readonly<Record<string, unknown>>;
  const clientId = claims.client_id;
  if (typeof clientId !== "string" || clientId.length === 0) {
    throw new AppError("invalid_claims", 'The "client_id" claim is missing or not acceptable');
  }
  const granted = typeof claims.scope === "string" ? claims.scope.split(" ") : [];
  return { clientId, scopes: new Set(MCP_SCOPES.filter((scope) => granted.includes(scope))) };
}

/**
 * The guard of `/api/mcp`: the one `Authorization` header verified as an access token of this
 * resource (zero database reads, the deleted-accounts set of this instance applies), then its
 * grant on `req.mcpGrant`. Every refusal carries the challenge that sends a client to the
 * protected resource metadata.
 */
export function mcpBearer(verifier: Pick<Verifier, "verifyNow">, resource: McpResource, deleted: { has(userId: string): boolean }): Guard {
  const authenticate = createAuthenticate(verifier, deleted);
  const admit = (req: Request, user: AuthUser) => {
    try {
      req.mcpGrant = grantOf(user);
    } catch (error) {
      req.auth = undefined;
      throw refusal(resource, error);
    }
  };
  return aroundGuard(
    "mcpBearer",
    <T>(req: Request, _res: unknown, rest: () => T): T => {
      let pending: AuthUser | Promise<AuthUser>;
      try {
        pending = authenticate(authorizationOf(req), req);
      } catch (error) {
        throw refusal(resource, error);
      }
      if (!(pending instanceof Promise)) {
        admit(req, pending);
        return rest();
      }
      return pending.then(
        (user) => {
          admit(req, user);
          return rest();
        },
        (error: unknown) => {
          throw refusal(resource, error);
        },
      ) as T;
    },
    { security: "mcpAccessToken" },
  );
}

/** The scope a request lacks, as RFC 6750 answers it: 403 `insufficient_scope` with the challenge naming the scope needed. */
export function insufficientScope(resource: McpResource, needed: McpScope, grant: McpGrant): AppError {
  const scopes = [...new Set([...grant.scopes, needed])];
  const description = `this needs the ${needed} scope`;
  return new AppError("insufficient_scope", description, {
    headers: { "WWW-Authenticate": challenge(resource, { code: "insufficient_scope", description }, scopes) },
  });
}
