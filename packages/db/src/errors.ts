import { Prisma } from "./generated/prisma/client.js";

/** True for a unique-constraint violation (Prisma P2002 or PostgreSQL 23505). */
export function isUniqueViolation(error: unknown): boolean {
  if (error instanceof Prisma.PrismaClientKnownRequestError) return error.code === "P2002";
  return (error as { code?: unknown } | null)?.code === "23505";
}

/** PostgreSQL and socket codes of a database that cannot be reached right now. */
const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "57P01", "57P02", "57P03", "53300"]);
/**
 * PostgreSQL codes of a database that is reachable but gone or empty: the database was dropped
 * (3D000, 57P04), or its schema, tables or columns are missing (3F000, 42P01, 42703) because
 * migrations were not applied or were undone. No request can succeed until an operator restores
 * it, exactly as while it is down.
 */
const MISSING_SCHEMA_CODES = new Set(["3D000", "57P04", "3F000", "42P01", "42703"]);
/**
 * Prisma's codes for the same: cannot reach (P1001), database does not exist (P1003), closed
 * connection (P1017), table or column does not exist (P2021, P2022), pool timeout (P2024).
 */
const PRISMA_CODES = new Set(["P1001", "P1003", "P1017", "P2021", "P2022", "P2024"]);

const isUnavailableCode = (code: unknown) => typeof code === "string" && (CONNECTION_CODES.has(code) || MISSING_SCHEMA_CODES.has(code));

/** The PostgreSQL code under a Prisma error raised through the pg adapter, if any. */
function adapterCode(error: { meta?: unknown }): unknown {
  const meta = error.meta as { driverAdapterError?: { cause?: { originalCode?: unknown } } } | undefined;
  return meta?.driverAdapterError?.cause?.originalCode;
}

/**
 * True when the error means the database cannot serve any request right now: it cannot be
 * reached (refused, reset, shut down, pool timeout), or it was dropped or emptied (no such
 * database, schema, table or column), as opposed to a bad query. Callers answer 503 for these.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth += 1) {
    const e = current as { code?: unknown; message?: unknown; cause?: unknown; name?: unknown; meta?: unknown };
    if (isUnavailableCode(e.code) || isUnavailableCode(adapterCode(e))) return true;
    if (e.name === "PrismaClientInitializationError") return true;
    if (e instanceof Prisma.PrismaClientKnownRequestError && PRISMA_CODES.has(e.code)) return true;
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
