import { type CheckResult, GROUPS, result } from "./checks.js";
import { databaseChecks } from "./db-checks.js";
import { checkDatabaseRole, deleteThrowawayUser } from "./db-hygiene.js";
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
  /** The identity's database (jwks checks, clean-up of the throwaway user); skipped without it. */
  databaseUrl?: string | undefined;
  /**
   * Where databaseUrl came from: the service's own (`environment`: its role is checked) or the
   * local stack's admin connection (`local-stack`: a superuser by design, not checked).
   */
  databaseSource?: "environment" | "local-stack";
  /** The identity's AUTH_SECRET (decrypt check); skipped without it. */
  authSecret?: string | undefined;
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** Receives remarks that are not checks (what was cleaned up, what remains). */
  onNote?: (line: string) => void;
}

/**
 * Runs the contract's diagnostics in its order: the list for "every call answers 401 after
 * login" (round trip, CORS exposure, bearer accepted), the list "after a restart" (AUTH_SECRET
 * decrypts a key, jwks count, /api/auth/jwks), and the MCP authorize cookie check. A throwaway
 * user it signed up is deleted afterwards when the database is at hand; otherwise a note says so.
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
      ...(options.databaseUrl && options.databaseSource === "environment" ? [await checkDatabaseRole(options.databaseUrl)] : []),
      await checkJwksEndpoint(probe),
      await checkMcpCookie(probe, trip),
    ].filter((r): r is CheckResult => r !== undefined);
  } finally {
    await probe.signOut(trip.cookie);
    if (trip.throwawayEmail) await cleanUp(trip.throwawayEmail, options);
  }
}

/** Deletes the throwaway user, or says that it remains and how to avoid one. */
async function cleanUp(email: string, options: DoctorOptions): Promise<void> {
  const note = options.onNote ?? (() => undefined);
  const avoid = "pass --email/--password of an existing account to sign up no one";
  if (!options.databaseUrl) {
    note(`the throwaway user ${email} remains (identity has no delete-user endpoint and DATABASE_URL is not set); ${avoid}`);
    return;
  }
  try {
    const deleted = await deleteThrowawayUser(options.databaseUrl, email);
    note(deleted ? `deleted the throwaway user ${email} and its sessions` : `the throwaway user ${email} was not found to delete`);
  } catch (error) {
    note(`the throwaway user ${email} remains (${(error as Error).message}); ${avoid}`);
  }
}
