import { z } from "zod";
import { ERROR_CODES, type ErrorCode } from "./errors.js";

/** Success envelope of every JSON business route: `{ ok: true, data }`. */
export interface Ok<T> {
  ok: true;
  data: T;
}

/** One field problem in a `validation_failed` error. */
export interface FieldIssue {
  /** Dotted path of the field, e.g. `email` or `items.0.title`. */
  path: string;
  message: string;
}

/** Error envelope of every route: `{ ok: false, error: { code, message, issues? } }`. */
export interface ErrorEnvelope {
  ok: false;
  error: { code: ErrorCode; message: string; issues?: FieldIssue[] };
}

/** Wraps a route's return value in the success envelope. */
export function ok<T>(data: T): Ok<T> {
  return { ok: true, data };
}

/** Builds an error envelope. */
export function fail(code: ErrorCode, message: string, issues?: FieldIssue[]): ErrorEnvelope {
  return { ok: false, error: issues?.length ? { code, message, issues } : { code, message } };
}

/** Schema of the success envelope around a given data schema. */
export function okSchema<T extends z.ZodType>(data: T) {
  return z.object({ ok: z.literal(true), data });
}

/** Schema of the error envelope. */
export const errorEnvelopeSchema = z.object({
  ok: z.literal(false),
  error: z.object({
    code: z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]),
    message: z.string(),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  }),
});

/** Turns zod issues into the envelope's field list, naming each field by its dotted path. */
export function toFieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join(".") || "(body)",
    message: issue.message,
  }));
}
