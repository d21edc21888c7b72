import { Prisma } from "./generated/prisma/client.js";

/** True for a unique-constraint violation (Prisma P2002 or PostgreSQL 23505). */
export function isUniqueViolation(error: unknown): boolean {
  if (error instanceof Prisma.PrismaClientKnownRequestError) return error.code === "P2002";
  return (error as { code?: unknown } | null)?.code === "23505";
}

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "57P01", "57P02", "57P03", "53300"]);

/**
 * True when the error means the database cannot be reached right now (refused, reset, shut down,
 * pool timeout), as opposed to a bad query. Callers answer 503 for these.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth += 1) {
    const e = current as { code?: unknown; message?: unknown; cause?: unknown; name?: unknown };
    if (typeof e.code === "string" && CONNECTION_CODES.has(e.code)) return true;
    if (e.name === "PrismaClientInitializationError") return true;
    if (e instanceof Prisma.PrismaClientKnownRequestError && (e.code === "P1001" || e.code === "P1017" || e.code === "P2024")) return true;
    const msg = typeof e.message === "string" ? e.message : "";
    if (/timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|terminating connection/i.test(msg)) return true;
    current = e.cause;
  }
  return false;
}

const INVALID_TEXT_CODES = new Set(["22021", "22P05", "22P02", "54000"]);

/**
 * True when PostgreSQL refused a value the client sent (invalid byte sequence, untranslatable
 * character, invalid text representation, value too long for an index): a 400, not a 500.
 * Schemas should catch these first; this is the backstop.
 */
export function isInvalidInput(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth += 1) {
    const e = current as { code?: unknown; cause?: unknown; meta?: { code?: unknown } };
    if (typeof e.code === "string" && INVALID_TEXT_CODES.has(e.code)) return true;
    if (typeof e.meta?.code === "string" && INVALID_TEXT_CODES.has(e.meta.code)) return true;
    const msg = (current as { message?: unknown }).message;
    if (typeof msg === "string" && /invalid byte sequence|untranslatable character|unsupported Unicode escape/i.test(msg)) return true;
    current = e.cause;
  }
  return false;
}
