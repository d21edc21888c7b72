import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { Logger } from "pino";

/** How a drain ended: every connection closed on its own, or the deadline closed the rest. */
export type DrainOutcome = "drained" | "deadline";

/** Stops a server politely; see {@link politeDrain}. */
export interface Drain {
  /**
   * Starts draining (once; later calls return the same promise). `onDeadline` runs when
   * `deadlineMs` passes, before the connections still open are closed.
   */
  drain(deadlineMs: number, onDeadline?: () => void): Promise<DrainOutcome>;
}

/**
 * The orderly stop of every server ({@link serve}): stop accepting connections, keep serving the
 * open streams, sockets and in-flight requests until they end, close each keep-alive connection as
 * soon as it is idle, and only at `deadlineMs` close whatever is still open. At the gateway this
 * carries the upstreams' goodbyes (the API sends SSE clients a `shutdown` event and closes
 * WebSockets with 1001, apps/api/src/server.ts) to the clients before the edge closes.
 *
 * Call before the server handles its first upgrade: it keeps the upgraded sockets, which
 * `closeAllConnections` does not know about.
 */
export function politeDrain(server: Server, logger: Logger): Drain {
  const upgraded = new Set<Socket>();
  server.on("upgrade", (_req, socket: Socket) => {
    upgraded.add(socket);
    socket.once("close", () => upgraded.delete(socket));
  });
  let draining: Promise<DrainOutcome> | undefined;
  return {
    drain(deadlineMs, onDeadline) {
      draining ??= new Promise<DrainOutcome>((resolve) => {
        let outcome: DrainOutcome = "drained";
        // Node calls back once every connection, upgraded ones included, has closed.
        server.close(() => {
          clearInterval(sweep);
          clearTimeout(deadline);
          resolve(outcome);
        });
        server.closeIdleConnections();
        // A keep-alive connection becomes idle when its response ends; close it then, not at the deadline.
        const sweep = setInterval(() => server.closeIdleConnections(), 100);
        const deadline = setTimeout(() => {
          outcome = "deadline";
          logger.warn({ open: upgraded.size, deadlineMs }, "drain deadline reached; closing remaining connections");
          try {
            onDeadline?.();
          } catch (error) {
            logger.error({ err: error }, "drain deadline hook failed");
          }
          server.closeAllConnections();
          for (const socket of upgraded) socket.destroy();
        }, deadlineMs);
      });
      return draining;
    },
  };
}
