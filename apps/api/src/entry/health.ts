import { healthResponse, readyResponse } from "@app/contracts";
import type { Db } from "@app/db";
import { ANSWERED, type AnyRoute, defineRoute } from "@app/http-kit";

const TAG = "health";

/** `/healthz`: the process is up. `/readyz`: the database answers and events are being received (503 otherwise). */
export function healthRoutes(db: Pick<Db, "ping">, bus: { readonly connected: boolean }): AnyRoute[] {
  return [
    defineRoute({
      method: "get",
      path: "/healthz",
      tag: TAG,
      summary: "The process is up",
      response: healthResponse,
      reply: "json",
      // `instance`: the launcher's per-launch nonce (tools/stack/src/processes.ts), when it set one.
      handler: () => ({ status: "ok" as const, instance: process.env.STACK_INSTANCE_ID }),
    }),
    defineRoute({
      method: "get",
      path: "/readyz",
      tag: TAG,
      summary: "The database answers and events are being received (503 otherwise)",
      response: readyResponse,
      reply: "json",
      handler: async ({ res }) => {
        const database = await db.ping();
        const events = bus.connected ? "up" : "down";
        if (database && bus.connected) return { status: "ready" as const, database: "up", events };
        res.status(503).json({ status: "unavailable", database: database ? "up" : "down", events });
        return ANSWERED;
      },
    }),
  ];
}
