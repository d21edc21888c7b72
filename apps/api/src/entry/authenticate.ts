import type { IncomingMessage } from "node:http";
import { AUTH_VERIFY_ERROR_STATUS, type AuthVerifyErrorCode, type VerifiedToken, type Verifier } from "@app/auth-verify";
import type { JwtClaims } from "@app/contracts";
import { AppError, isAppError, setContextUser } from "@app/http-kit";

/**
 * Who a verified bearer token says the caller is, its claims typed as identity signs them
 * (`JwtClaims` of packages/contracts). Only `userId` is trusted; other claims may be stale.
 */
export type AuthUser = Omit<VerifiedToken, "claims"> & { readonly claims: Readonly<JwtClaims> };

declare global {
  namespace Express {
    interface Request {
      /** Set by the bearer entries (JSON route, stream middleware) once the token verified. */
      auth?: AuthUser;
      /** Set by the cookie entry (MCP authorize only): the user of the identity session. */
      cookieUser?: { userId: string };
    }
  }
}

/**
 * The one verification primitive every entry pattern calls: an `Authorization` header value in, a
 * verified user out. jose checks the signature against the in-memory key set and the claims: zero
 * database queries. A repeated token (a verified-cache hit while the key set is fresh) and an early
 * refusal are answered synchronously, returning the user or throwing; any other token is verified
 * by jose and answered with a promise (packages/auth-verify/src/verify.ts). Failures become an
 * {@link AppError} with the verifier's own code (401, or 503 `jwks_unavailable`), thrown or
 * rejected accordingly. With `into` (the request), the admitted user is also recorded there and
 * on the request context, inside the same step: a token jose has still to verify costs one
 * promise, not one per stage.
 */
export type Authenticate = (authorization: string | undefined, into?: AuthTarget) => AuthUser | Promise<AuthUser>;

/**
 * {@link Authenticate} for a route: records the admitted user in `into` and then runs `rest` (the
 * rest of the route) and returns what it returns; a token jose has still to verify runs `rest` in
 * the reaction to its verification, so the route costs that one promise and no other. A refusal
 * is thrown or rejected as by {@link Authenticate}; what `rest` throws passes through unchanged.
 */
export type AuthenticateThen = <T>(authorization: string | undefined, into: AuthTarget, rest: () => T) => T | Promise<Awaited<T>>;

/** Where an admitted user is recorded (`req.auth`); the request context is tagged with its id. */
export interface AuthTarget {
  auth?: AuthUser | undefined;
}

const AUTHORIZATION = "authorization";
const INVALID_TOKEN = { "WWW-Authenticate": `Bearer error="invalid_token"` };

function isVerifyCode(code: unknown): code is AuthVerifyErrorCode {
  return typeof code === "string" && Object.hasOwn(AUTH_VERIFY_ERROR_STATUS, code);
}

/** Maps a verifier failure to the service's error type (headers included). */
export function toAuthError(error: unknown): AppError {
  if (isAppError(error)) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if ((error as { name?: unknown } | null)?.name === "AuthVerifyError" && isVerifyCode(code)) {
    const message = error instanceof Error ? error.message : "unauthorized";
    const headers: Record<string, string> = code === "jwks_unavailable" ? { "Retry-After": "30" } : { ...INVALID_TOKEN };
    return new AppError(code, message, { headers, cause: error });
  }
  return new AppError("internal_error", "authentication failed unexpectedly", { expose: false, cause: error });
}

/** The answer to a valid token whose account was deleted since it was issued. */
export function accountDeletedError(): AppError {
  return new AppError("unauthorized", "the account of this token no longer exists", { headers: INVALID_TOKEN });
}

/**
 * Wraps a verifier as the {@link Authenticate} primitive. With `deleted` (this instance's in-memory
 * set of deleted accounts, account/deleted-users.ts), a valid token of a deleted account answers
 * 401 `unauthorized`: still zero database reads.
 */
export function createAuthenticate(
  verifier: Pick<Verifier, "verifyNow">,
  deleted?: { has(userId: string): boolean },
): Authenticate & { readonly andThen: AuthenticateThen } {
  const reject = (error: unknown): never => {
    throw toAuthError(error);
  };
  const admit = (user: AuthUser, into: AuthTarget | undefined): AuthUser => {
    if (deleted?.has(user.userId)) throw accountDeletedError();
    if (into) {
      into.auth = user;
      setContextUser(user.userId);
    }
    return user;
  };
  const verify = (authorization: string | undefined): AuthUser | Promise<AuthUser> => {
    try {
      // jose checked `sub`, `iat`, `exp`, `iss` and `aud` (REQUIRED_CLAIMS, the verifier's issuer and audience).
      return verifier.verifyNow(authorization) as AuthUser | Promise<AuthUser>;
    } catch (error) {
      return reject(error);
    }
  };
  const authenticate: Authenticate = (authorization, into) => {
    const result = verify(authorization);
    // `reject` leaves an AppError as it is, so admit's own refusal may pass through it or not.
    return result instanceof Promise ? result.then((user) => admit(user, into), reject) : admit(result, into);
  };
  const andThen: AuthenticateThen = (authorization, into, rest) => {
    const result = verify(authorization);
    if (!(result instanceof Promise)) {
      admit(result, into);
      return rest();
    }
    // `reject` sees only the verifier's refusal: what admit and `rest` throw rejects as it is.
    return result.then((user) => {
      admit(user, into);
      return rest();
    }, reject) as Promise<Awaited<ReturnType<typeof rest>>>;
  };
  return Object.assign(authenticate, { andThen });
}

/**
 * The one `Authorization` header of a request. Node keeps only the first of repeated
 * Authorization headers, so a request carrying two would be judged by whichever a proxy put
 * first; such a request is refused as `malformed_token` (401) instead.
 */
export function authorizationOf(req: Pick<IncomingMessage, "headers" | "rawHeaders">): string | undefined {
  let seen = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    // Length first: most names are not 13 characters long, and those skip the lowercase copy.
    if (name.length === AUTHORIZATION.length && name.toLowerCase() === AUTHORIZATION) seen += 1;
  }
  if (seen > 1) throw new AppError("malformed_token", "more than one Authorization header", { headers: INVALID_TOKEN });
  return req.headers.authorization;
}
