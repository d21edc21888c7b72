import { type SessionResponse, signInResponse, type TwoFactorMethod } from "@app/contracts";
import { z } from "zod";
import { ApiError, errorFromResponse } from "./errors.js";
import { type Http, readJson } from "./http.js";

/** A signed-in session: the identity's answer and the JWT now stored as `authToken`. */
export interface SignedIn extends SessionResponse {
  token: string;
}

/**
 * What a sign-in did: signed the user in (the JWT is stored), or, for an account with two-factor
 * authentication on, opened no session yet and left a short-lived pending cookie; the sign-in
 * finishes with one of `methods` (`totp`: an authenticator app; `otp`: a code mailed on request)
 * or a backup code (the verify calls of the client's `auth.twoFactor`).
 */
export type SignInResult = ({ status: "signed_in" } & SignedIn) | { status: "two_factor"; methods: TwoFactorMethod[] };

/** better-auth's answer of a sign-in that waits for a second factor (no session cookie, a pending one). */
const twoFactorRedirect = z.looseObject({
  twoFactorRedirect: z.literal(true),
  twoFactorMethods: z.array(z.string()).optional(),
});

/** A sign-in's first answer when the route names no shape: the second-factor redirect, or any object. */
const anyAnswer = z.union([twoFactorRedirect, z.looseObject({})]);

/** Answer of sign-in/email: `{session, user}`, or the second-factor redirect. */
export const passwordSignInAnswer = signInResponse;

/** Options of {@link identityCall}. */
export interface IdentityCallOptions {
  method?: "GET" | "POST";
  /** JSON body (POST). */
  body?: unknown;
  /** Query parameters (GET); undefined values are left out, a list repeats its key. */
  query?: Record<string, string | readonly string[] | undefined>;
}

/**
 * A call to `/api/auth<path>` with the session cookie, answering 2xx or throwing {@link ApiError}.
 * `unauthorized` means the cookie session is gone (a wrong code is `invalid_code`, a missing
 * pending sign-in `invalid_two_factor_cookie`): this client's session is over too.
 */
export async function identityCall(http: Http, path: string, options: IdentityCallOptions = {}): Promise<Response> {
  const method = options.method ?? (options.body === undefined ? "GET" : "POST");
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(options.query ?? {})) {
    if (typeof value === "string") query.set(key, value);
    else for (const item of value ?? []) query.append(key, item);
  }
  const search = query.toString() ? `?${query}` : "";
  const response = await http.identity(
    `${path}${search}`,
    options.body === undefined
      ? { method, headers: { accept: "application/json" } }
      : { method, headers: { "content-type": "application/json", accept: "application/json" }, body: JSON.stringify(options.body) },
  );
  if (!response.ok) {
    const error = await errorFromResponse(response);
    if (error.status === 401 && error.code === "unauthorized") http.endSession();
    throw error;
  }
  return response;
}

/** {@link identityCall}, its JSON answer parsed by `schema`. */
export async function identityJson<S extends z.ZodType>(
  http: Http,
  schema: S,
  path: string,
  options?: IdentityCallOptions,
): Promise<z.output<S>> {
  return readJson(await identityCall(http, path, options), schema);
}

/**
 * Step 2 of every sign-in: awaits get-session with the cookie the first step set and stores the
 * JWT from `set-auth-jwt`.
 */
export async function completeSignIn(http: Http): Promise<SignedIn> {
  const { token, session } = await http.refresh();
  if (!session) throw new ApiError(401, "unauthorized", "get-session found no session right after signing in (was the cookie refused?)");
  if (!token) {
    throw new ApiError(
      401,
      "missing_token",
      "get-session answered without a readable set-auth-jwt header: the service must list it in its CORS exposed headers",
    );
  }
  return { ...session, token };
}

/**
 * Reads a sign-in's first answer, checked by `schema` (the route's answer, which includes the
 * second-factor redirect): the redirect becomes `two_factor`; any other answer set the session
 * cookie, and step 2 follows ({@link completeSignIn}).
 */
export async function signInAnswer(http: Http, response: Response, schema: z.ZodType = anyAnswer): Promise<SignInResult> {
  const answer: unknown = await readJson(response, schema);
  const redirect = twoFactorRedirect.safeParse(answer);
  if (redirect.success) return { status: "two_factor", methods: (redirect.data.twoFactorMethods ?? []) as TwoFactorMethod[] };
  return { status: "signed_in", ...(await completeSignIn(http)) };
}
