import { AppError, setContextUser } from "@app/http-kit";
import type { RequestHandler } from "express";
import { z } from "zod";
import { readJsonCapped } from "../lib/read-capped.js";

const sessionBody = z.looseObject({ user: z.looseObject({ id: z.string().min(1) }) });

/** Options of {@link cookieSession}. */
export interface CookieSessionOptions {
  /** `${IDENTITY_URL}/api/auth/get-session`. */
  getSessionUrl: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/**
 * The one exception to bearer authentication, for GET routes reached by top-level browser
 * navigation (which cannot carry an Authorization header): only GET /api/mcp-oauth/authorize.
 * It forwards the incoming `cookie` header to the identity service's get-session and trusts the
 * user id of the session it answers with. It never reads `Authorization`: a bearer alone is 401.
 * No cookie, or identity saying no → 401 `unauthorized`; identity unreachable → 503.
 */
export function cookieSession(options: CookieSessionOptions): RequestHandler {
  const doFetch = options.fetch ?? fetch;
  return async (req, res, next) => {
    const cookie = req.headers.cookie;
    if (!cookie) throw new AppError("unauthorized", "a session cookie is required: sign in first");
    let response: Response;
    try {
      response = await doFetch(options.getSessionUrl, {
        method: "GET",
        headers: { cookie, accept: "application/json", "user-agent": req.get("user-agent") ?? "api" },
        redirect: "manual",
        signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
      });
    } catch (cause) {
      throw new AppError("service_unavailable", "the identity service could not be reached", { cause });
    }
    if (response.status === 401 || response.status === 403) {
      await response.body?.cancel().catch(() => undefined);
      throw new AppError("unauthorized", "no valid session: sign in first");
    }
    const json = await readJsonCapped(response);
    const parsed = sessionBody.safeParse(json);
    if (!response.ok || !parsed.success) throw new AppError("service_unavailable", "the identity service gave no usable session answer");
    // Keep a sliding session alive: pass on the identity service's refreshed cookie, if any.
    const refreshed = response.headers.getSetCookie();
    if (refreshed.length) res.append("set-cookie", refreshed);
    req.cookieUser = { userId: parsed.data.user.id };
    setContextUser(parsed.data.user.id);
    next();
  };
}
