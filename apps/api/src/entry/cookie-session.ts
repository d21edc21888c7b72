import { AppError, type Guard, guard, setContextUser } from "@app/http-kit";
import type { Request } from "express";
import { z } from "zod";
import { readTextCapped } from "../lib/read-capped.js";

const sessionBody = z.looseObject({ user: z.looseObject({ id: z.string().min(1) }) });

/** Options of {@link cookieSession}. */
export interface CookieSessionOptions {
  /** `${IDENTITY_URL}/api/auth/get-session`. */
  getSessionUrl: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/**
 * The headers identity needs to see the browser's request as its own: the cookie, the user agent,
 * and the forwarding chain (this hop appended to `X-Forwarded-For`; the protocol and host the
 * browser used), so session metadata and cookie attributes match what a direct call would give.
 */
export function forwardedHeaders(req: Request, cookie: string): Record<string, string> {
  const chain = [req.get("x-forwarded-for"), req.socket.remoteAddress].filter((v): v is string => Boolean(v)).join(", ");
  const host = req.get("x-forwarded-host") ?? req.get("host");
  return {
    cookie,
    accept: "application/json",
    "user-agent": req.get("user-agent") ?? "api",
    ...(chain ? { "x-forwarded-for": chain } : {}),
    "x-forwarded-proto": req.protocol,
    ...(host ? { "x-forwarded-host": host } : {}),
  };
}

/**
 * The one exception to bearer authentication, for GET routes reached by top-level browser
 * navigation (which cannot carry an Authorization header): only GET /api/mcp-oauth/authorize.
 * It forwards the incoming `cookie` header (with the user agent and forwarding headers) to the
 * identity service's `POST get-session` and trusts the user id of the session it answers with. It
 * never reads `Authorization`: a bearer alone is 401. No cookie, identity saying no (401/403, or
 * 200 with an empty or `null` session) → 401 `unauthorized`; identity unreachable or answering
 * garbage → 503.
 */
export function cookieSession(options: CookieSessionOptions): Guard {
  const doFetch = options.fetch ?? fetch;
  return guard(
    "session",
    async (req, res) => {
      const cookie = req.headers.cookie;
      if (!cookie) throw new AppError("unauthorized", "a session cookie is required: sign in first");
      let response: Response;
      try {
        response = await doFetch(options.getSessionUrl, {
          method: "POST",
          headers: forwardedHeaders(req, cookie),
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
      const text = response.ok ? await readTextCapped(response) : undefined;
      if (!response.ok) await response.body?.cancel().catch(() => undefined);
      let json: unknown;
      try {
        json = text === undefined ? undefined : text.trim() === "" ? null : JSON.parse(text);
      } catch {
        json = undefined;
      }
      // "No session" may also be spelled as a 200 with nothing in it.
      const empty = json === null || (typeof json === "object" && (json as { user?: unknown }).user === null);
      if (response.ok && empty) throw new AppError("unauthorized", "no valid session: sign in first");
      const parsed = sessionBody.safeParse(json);
      if (!response.ok || !parsed.success) throw new AppError("service_unavailable", "the identity service gave no usable session answer");
      // Keep a sliding session alive: pass on the identity service's refreshed cookie, if any.
      const refreshed = response.headers.getSetCookie();
      if (refreshed.length) res.append("set-cookie", refreshed);
      req.cookieUser = { userId: parsed.data.user.id };
      setContextUser(parsed.data.user.id);
    },
    { security: "sessionCookie" },
  );
}
