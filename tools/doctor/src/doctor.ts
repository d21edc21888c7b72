import { type CheckResult, GROUPS, result } from "./checks.js";
import { databaseChecks } from "./db-checks.js";
import { checkApiAcceptsJwt, checkCorsExposure, checkJwksEndpoint, checkMcpCookie, checkRoundTrip } from "./http-checks.js";
import { HttpProbe } from "./http-probe.js";

/** What the doctor examines. */
export interface DoctorOptions {
  /** The service's base URL (identity under /api/auth, API under /api). */
  baseUrl: string;
  /** The web app's origin for the CORS checks. */
  origin: string;
  email?: string | undefined;
  password?: string | undefined;
  /** The identity's database (jwks checks); skipped without it. */
  databaseUrl?: string | undefined;
  /** The identity's AUTH_SECRET (decrypt check); skipped without it. */
  authSecret?: string | undefined;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/**
 * Runs the contract's diagnostics in its order: the list for "every call answers 401 after
 * login" (round trip, CORS exposure, bearer accepted), the list "after a restart" (AUTH_SECRET
 * decrypts a key, jwks count, /api/auth/jwks), and the MCP authorize cookie check.
 */
export async function runDoctor(options: DoctorOptions): Promise<CheckResult[]> {
  const probe = new HttpProbe({
    baseUrl: options.baseUrl,
    email: options.email,
    password: options.password,
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const health = await probe.call("/api/auth/jwks");
  if (health.status === 0) {
    return [
      result.fail(
        "reachable",
        GROUPS.login,
        `${probe.baseUrl} answers`,
        health.body,
        "start the service (pnpm start) or pass --base-url with its public URL",
      ),
    ];
  }
  const trip = await probe.roundTrip();
  try {
    return [
      checkRoundTrip(trip),
      await checkCorsExposure(probe, options.origin),
      await checkApiAcceptsJwt(probe, trip, options.origin),
      ...(await databaseChecks(options.databaseUrl, options.authSecret)),
      await checkJwksEndpoint(probe),
      await checkMcpCookie(probe, trip),
    ];
  } finally {
    await probe.signOut(trip.cookie);
  }
}
