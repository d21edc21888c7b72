import { AUTH_BASE_PATH, jwksResponse, SET_AUTH_JWT_HEADER } from "@app/contracts";
import { type CheckResult, GROUPS, result } from "./checks.js";
import { describe, type HttpProbe, type RoundTrip } from "./http-probe.js";

const { login, restart, mcp } = GROUPS;

/** No authToken stored / get-session not awaited: does the two-step login yield a JWT at all? */
export function checkRoundTrip(trip: RoundTrip): CheckResult {
  const title = "sign-in, then get-session yields a JWT in set-auth-jwt";
  const who = trip.throwawayEmail ? `as throwaway ${trip.throwawayEmail}` : "with the given credentials";
  if (trip.jwt && !trip.problem) return result.pass("round-trip", login, title, who);
  return result.fail(
    "round-trip",
    login,
    title,
    trip.problem ?? "no JWT",
    "sign in (POST /api/auth/sign-in/email), then await POST /api/auth/get-session with the cookie and store its set-auth-jwt header as authToken; " +
      "if get-session fails, read the identity service's log (key set, AUTH_SECRET, database)",
  );
}

/** set-auth-jwt missing from the exposed CORS headers (for the web app's origin). */
export async function checkCorsExposure(probe: HttpProbe, origin: string): Promise<CheckResult> {
  const title = `CORS lets ${origin} read set-auth-jwt from get-session`;
  const fixOrigin = `add ${origin} to CORS_ORIGINS of the identity and API services`;
  const preflight = await probe.call(`${AUTH_BASE_PATH}/get-session`, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "POST" },
  });
  if (preflight.status === 0) return result.fail("cors-exposes-jwt", login, title, describe(preflight), "make the base URL reachable");
  if (
    preflight.headers.get("access-control-allow-origin") !== origin ||
    preflight.headers.get("access-control-allow-credentials") !== "true"
  ) {
    return result.fail("cors-exposes-jwt", login, title, `preflight from ${origin} is not allowed with credentials`, fixOrigin);
  }
  const actual = await probe.call(`${AUTH_BASE_PATH}/get-session`, { method: "POST", headers: { origin } });
  if (actual.headers.get("access-control-allow-origin") !== origin) {
    return result.fail(
      "cors-exposes-jwt",
      login,
      title,
      `get-session from ${origin} answered ${describe(actual)} without allowing the origin`,
      fixOrigin,
    );
  }
  const exposed = (actual.headers.get("access-control-expose-headers") ?? "").split(",").map((h) => h.trim().toLowerCase());
  if (!exposed.includes(SET_AUTH_JWT_HEADER)) {
    return result.fail(
      "cors-exposes-jwt",
      login,
      title,
      `Access-Control-Expose-Headers is "${exposed.filter(Boolean).join(", ")}"`,
      `list ${SET_AUTH_JWT_HEADER} in the exposed CORS headers (unset CORS_EXPOSE_AUTH_HEADER=false; a proxy must not strip it)`,
    );
  }
  return result.pass("cors-exposes-jwt", login, title);
}

/** Authorization header not injected: the API accepts the JWT as a Bearer, and only as one. */
export async function checkApiAcceptsJwt(probe: HttpProbe, trip: RoundTrip, origin: string): Promise<CheckResult> {
  const title = "the API accepts the JWT as Authorization: Bearer";
  if (!trip.jwt) return result.skip("api-accepts-jwt", login, title, "no JWT from the round trip");
  const preflight = await probe.call("/api/me", {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "GET", "access-control-request-headers": "authorization" },
  });
  const allowed = (preflight.headers.get("access-control-allow-headers") ?? "").toLowerCase();
  if (preflight.headers.get("access-control-allow-origin") !== origin || !allowed.includes("authorization")) {
    return result.fail(
      "api-accepts-jwt",
      login,
      title,
      `the API's preflight from ${origin} does not allow the Authorization header`,
      `add ${origin} to the API's CORS_ORIGINS`,
    );
  }
  const bare = await probe.call("/api/me");
  const me = await probe.call("/api/me", { headers: { authorization: `Bearer ${trip.jwt}` } });
  if (me.status !== 200) {
    const hint =
      me.code === "invalid_claims"
        ? "issuer/audience differ: give identity and API the same BASE_URL (or JWT_ISSUER/JWT_AUDIENCE)"
        : me.code === "unknown_key" || me.code === "jwks_unavailable"
          ? "the API cannot get the signing key: check its IDENTITY_URL and that /api/auth/jwks is reachable from it"
          : "send Authorization: Bearer <authToken> on every business request";
    return result.fail("api-accepts-jwt", login, title, `GET /api/me with the JWT answered ${describe(me)}`, hint);
  }
  if (bare.status !== 401) {
    return result.fail(
      "api-accepts-jwt",
      login,
      title,
      `GET /api/me without a JWT answered ${describe(bare)}, not 401`,
      "business routes must require the bearer JWT",
    );
  }
  let id: string | undefined;
  try {
    id = (JSON.parse(me.body) as { data?: { id?: string } }).data?.id;
  } catch {
    id = undefined;
  }
  if (trip.userId && id !== trip.userId) {
    return result.fail(
      "api-accepts-jwt",
      login,
      title,
      `GET /api/me answered user ${id ?? "?"}, not ${trip.userId}`,
      "the API must trust only the JWT's sub",
    );
  }
  return result.pass("api-accepts-jwt", login, title);
}

/** /api/auth/jwks returns no keys array. */
export async function checkJwksEndpoint(probe: HttpProbe): Promise<CheckResult> {
  const title = "GET /api/auth/jwks returns a keys array";
  const answer = await probe.call(`${AUTH_BASE_PATH}/jwks`);
  let parsed: ReturnType<typeof jwksResponse.safeParse> | undefined;
  try {
    parsed = jwksResponse.safeParse(JSON.parse(answer.body));
  } catch {
    parsed = undefined;
  }
  if (answer.status !== 200 || !parsed?.success) {
    return result.fail(
      "jwks-endpoint",
      restart,
      title,
      `answered ${describe(answer)}${answer.status === 200 ? " without a { keys: [...] } body" : ""}`,
      "route /api/auth/* to the identity service and check its log; it must serve { keys: [...] }",
    );
  }
  if (!parsed.data.keys.length) {
    return result.fail(
      "jwks-endpoint",
      restart,
      title,
      "the keys array is empty",
      "sign in once (get-session creates the first key) and check the identity log",
    );
  }
  return result.pass("jwks-endpoint", restart, title, `${parsed.data.keys.length} key(s)`);
}

/** 401 on the MCP authorize route: it must take the session cookie (top-level navigation). */
export async function checkMcpCookie(probe: HttpProbe, trip: RoundTrip): Promise<CheckResult> {
  const title = "the MCP authorize route accepts the session cookie";
  if (!trip.cookie) return result.skip("mcp-cookie", mcp, title, "no session cookie from the round trip");
  const path = "/api/mcp-oauth/authorize?serverId=doctor-probe";
  const withoutCookie = await probe.call(path);
  const withCookie = await probe.call(path, { headers: { cookie: trip.cookie } });
  if (withCookie.status === 401 || withCookie.status === 0) {
    return result.fail(
      "mcp-cookie",
      mcp,
      title,
      `with the session cookie it answered ${describe(withCookie)}`,
      "the route must authenticate with the cookie via the identity's get-session (never Bearer): check the API's IDENTITY_URL and COOKIE_PREFIX; " +
        "in browsers the cookie goes missing when cleared, blocked, or when API and web app sit on different apex domains (same-site)",
    );
  }
  if (withoutCookie.status !== 401) {
    return result.fail(
      "mcp-cookie",
      mcp,
      title,
      `without a cookie it answered ${describe(withoutCookie)}, not 401`,
      "the route must require the session cookie",
    );
  }
  return result.pass("mcp-cookie", mcp, title, `cookie accepted: ${describe(withCookie)} for an unknown server`);
}
