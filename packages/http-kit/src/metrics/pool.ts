import { Gauge, type Registry, register } from "prom-client";

/** What the gauges read from a `pg` Pool (`Db.pool` of @app/db). */
export interface PoolLike {
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
  readonly options?: { max?: number | undefined };
}

/**
 * Database pool use, read when scraped: `db_pool_connections` (open), `db_pool_idle_connections`,
 * `db_pool_waiting_requests` (queries waiting for a connection: the pool is exhausted) and
 * `db_pool_max_connections`.
 */
export function poolMetrics(pool: PoolLike, registry: Registry = register): void {
  const gauge = (name: string, help: string, read: () => number | undefined) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const value = read();
        if (value !== undefined) this.set(value);
      },
    });
  gauge("db_pool_connections", "Open connections of the database pool", () => pool.totalCount);
  gauge("db_pool_idle_connections", "Idle connections of the database pool", () => pool.idleCount);
  gauge("db_pool_waiting_requests", "Queries waiting for a connection of the database pool", () => pool.waitingCount);
  gauge("db_pool_max_connections", "Most connections the database pool opens", () => pool.options?.max);
}
