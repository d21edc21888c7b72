import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "./generated/prisma/client.js";

/** Options for {@link createDb}. */
export interface DbOptions {
  /** Pool size per process (default 10). */
  max?: number;
  /** How long to wait for a free connection before failing (default 5 s): a down database fails fast. */
  connectionTimeoutMillis?: number;
  /** Per-statement timeout in ms (default 10 s), so a stuck query cannot hold a connection forever. */
  statementTimeoutMillis?: number;
  /** Called for errors on idle pooled connections (a restarted server); the pool replaces them. */
  onPoolError?: (error: Error) => void;
}

/** A Prisma client on its own `pg` pool, plus what tests and health checks need from the pool. */
export interface Db {
  prisma: PrismaClient;
  pool: pg.Pool;
  /** True when one `SELECT 1` answers. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

/**
 * Builds the Prisma client (Rust-free, `@prisma/adapter-pg`) over a bounded `pg` pool with
 * fail-fast timeouts. Tests that count statements use `createCountedDb` of `@app/db/testing`.
 */
export function createDb(databaseUrl: string, options: DbOptions = {}): Db {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 5_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: options.statementTimeoutMillis ?? 10_000,
  });
  pool.on("error", (error) => options.onPoolError?.(error));
  const adapter = new PrismaPg(pool, { onPoolError: options.onPoolError });
  const prisma = new PrismaClient({ adapter });
  return {
    prisma,
    pool,
    async ping() {
      try {
        await pool.query("SELECT 1");
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      await prisma.$disconnect().catch(() => undefined);
      await pool.end().catch(() => undefined);
    },
  };
}
