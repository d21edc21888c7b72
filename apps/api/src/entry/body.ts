import { type Guard, jsonBodyGuard } from "@app/http-kit";

/** Largest JSON body a business route accepts. */
export const JSON_BODY_LIMIT = "256kb";

/**
 * The guard that reads a JSON body, placed after authentication so an unauthenticated caller gets
 * 401 before any body error: 415 for another content type, 400 for malformed JSON, 413 when too
 * large (packages/http-kit/src/json-body.ts).
 */
export const jsonBody: Guard = jsonBodyGuard({ limit: JSON_BODY_LIMIT });
