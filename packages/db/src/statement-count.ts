import { createDb, type Db, type DbOptions } from "./client.js";

/** A {@link Db} that counts the statements it sends, for the tests that prove how many a request costs. */
export interface CountedDb extends Db {
  /** Number of statements this Db sent since it was created. */
  queryCount(): number;
}

/**
 * {@link createDb} with every statement counted: each pooled connection's `query` is wrapped as
 * the pool opens it. The pool opens connections lazily, so none escapes the count.
 */
export function createCountedDb(databaseUrl: string, options: DbOptions = {}): CountedDb {
  const db = createDb(databaseUrl, options);
  let count = 0;
  db.pool.on("connect", (client) => {
    const original = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      count += 1;
      return original(...args);
    };
  });
  return { ...db, queryCount: () => count };
}
