import { AsyncResource } from "node:async_hooks";
import { AppError, type Guard, guard } from "@app/http-kit";
import type { Request, Response } from "express";
import type { AuthUser } from "./authenticate.js";

/**
 * A raw response (SSE, file) ends long after the handler returned, from a socket callback that has
 * lost the request's async context, so the access log line would miss `userId`. Emitting the
 * response's events inside the request context keeps the tag on every line of this request.
 */
function keepContextOnResponseEvents(res: Response): void {
  const emit = res.emit as (...args: unknown[]) => boolean;
  res.emit = AsyncResource.bind(emit, "response-events", res) as typeof res.emit;
}

/**
 * The guard of streaming and file routes, placed after `bearer`: their response outlives the
 * handler, so its events are bound to the request's context (see above).
 */
export const streamAuth: Guard = guard("streamAuth", (_req, res) => keepContextOnResponseEvents(res));

/** The verified user of a request that passed the bearer guard (401 if it did not). */
export function requireAuth(req: Request): AuthUser {
  if (!req.auth) throw new AppError("missing_token", "No bearer token was presented");
  return req.auth;
}
