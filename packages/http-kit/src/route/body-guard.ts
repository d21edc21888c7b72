import { type JsonBodyOptions, jsonBody } from "../json-body.js";
import { type Guard, middlewareGuard } from "./guard.js";

/**
 * The guard that reads a JSON body (json-body.ts: 415 for another content type, 400 for
 * malformed JSON or unsafe text, 413 over the limit). Placed after the guards that may refuse
 * without it (authentication, per-IP limits), so they answer before any body is read.
 */
export function jsonBodyGuard(options: JsonBodyOptions = {}): Guard {
  return middlewareGuard("jsonBody", jsonBody(options), { readsBody: true });
}
