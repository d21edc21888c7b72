import type { Db, PrismaClient } from "@app/db";

/** The `pg` pool of {@link Db} (the one Prisma uses too), for the hot reads. */
export type SqlPool = Db["pool"];

/** One parameterised statement, named so `pg` prepares it once per connection. */
export interface RawQuery {
  /** Statement name (unique per text). */
  readonly name: string;
  readonly text: string;
  readonly values: readonly unknown[];
}

/**
 * Runs one statement in one database round trip: on the `pg` pool when there is one (no ORM
 * layer: about a quarter of the CPU of a Prisma query), else through Prisma's raw query API.
 * Row values are what `pg` parses (timestamptz → Date, bytea → Buffer/Uint8Array).
 */
export async function rawRows<Row>(prisma: PrismaClient, pool: SqlPool | undefined, query: RawQuery): Promise<Row[]> {
  if (pool !== undefined) {
    const result = await pool.query({ name: query.name, text: query.text, values: [...query.values] });
    return result.rows as Row[];
  }
  return prisma.$queryRawUnsafe<Row[]>(query.text, ...query.values);
}
