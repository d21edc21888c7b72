import type { RequestHandler } from "express";

/**
 * Puts `code` and `message` at the top of every error body under /api/auth, beside the shared
 * envelope (`{ ok: false, error: { code, message } }`, packages/http-kit/src/error-handler.ts):
 * better-auth's client (`better-auth/client`, through better-fetch) hands the body to its caller
 * as `error` and expects `error.code` and `error.message` there.
 */
export const betterAuthErrorFields: RequestHandler = (_req, res, next) => {
  const json = res.json.bind(res);
  res.json = (body?: unknown) => {
    const envelope = body as { ok?: unknown; error?: { code?: unknown; message?: unknown } } | null | undefined;
    if (envelope?.ok === false && envelope.error) return json({ ...envelope, code: envelope.error.code, message: envelope.error.message });
    return json(body);
  };
  next();
};
