import { toFieldIssues } from "@app/contracts";
import type { z } from "zod";
import { AppError } from "./app-error.js";

/**
 * Parses `value` with `schema`; on failure throws `validation_failed` (400) naming each field.
 * `where` prefixes the message ("body", "query", "params").
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, where = "body"): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = toFieldIssues(result.error);
  const fields = [...new Set(issues.map((i) => i.path))].join(", ");
  throw new AppError("validation_failed", `invalid ${where}: ${fields}`, { issues });
}
