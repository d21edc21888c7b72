import { jsonBody } from "@app/http-kit";
import type { Request, Response } from "express";

/** Largest JSON body a business route accepts. */
export const JSON_BODY_LIMIT = "256kb";

const parseJson = jsonBody({ limit: JSON_BODY_LIMIT });

/**
 * Reads a JSON body on demand (after authentication, so an unauthenticated caller gets 401 before
 * any body error): 415 for another content type, 400 for malformed JSON, 413 when too large.
 */
export function readJsonBody(req: Request, res: Response): Promise<unknown> {
  return new Promise((resolve, reject) => {
    parseJson(req, res, (error?: unknown) => (error ? reject(error) : resolve(req.body ?? {})));
  });
}
