import pg from "pg";

/** `application_name` of the LISTEN connection (find it in pg_stat_activity). */
export const EVENT_BUS_APPLICATION_NAME = "api-events";

/**
 * A client for the event bus's LISTEN connection: named `api-events` in pg_stat_activity, with
 * TCP keep-alive so the kernel notices a vanished peer too.
 */
export function listenClient(databaseUrl: string): pg.Client {
  return new pg.Client({
    connectionString: databaseUrl,
    connectionTimeoutMillis: 5_000,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    application_name: EVENT_BUS_APPLICATION_NAME,
  });
}

/**
 * One liveness probe: `SELECT 1` answered within `timeoutMs` gives undefined; otherwise the
 * error, and the socket is destroyed (a dead peer would never answer the goodbye either).
 */
export async function probeConnection(client: pg.Client, timeoutMs: number): Promise<Error | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("LISTEN connection did not answer the heartbeat")), timeoutMs);
  });
  try {
    await Promise.race([client.query("SELECT 1"), timeout]);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Ends a client politely, but waits at most `timeoutMs` for the server's goodbye: a connection
 * that died silently never sends it, and shutdown must not hang on it. Then the socket is dropped.
 */
export async function endClient(client: pg.Client, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  await Promise.race([client.end().catch(() => undefined), waited]);
  clearTimeout(timer);
  client.connection.stream.destroy();
}
