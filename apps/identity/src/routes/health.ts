import { healthResponse, readyResponse } from "@app/contracts";
import type { Db } from "@app/db";
import { ANSWERED, type AnyRoute, defineRoute } from "@app/http-kit";

const TAG = "health";

/** `/healthz`: the process is up. `/readyz`: and its database answers (503 otherwise). */
export function healthRoutes(db: Pick<Db, "ping">): AnyRoute[] {
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
      summary: "The database answers (503 otherwise)",
      response: readyResponse,
      reply: "json",
      handler: async ({ res }) => {
        if (await db.ping()) return { status: "ready" as const };
        res.status(503).json({ status: "unavailable", database: "unreachable" });
        return ANSWERED;
      },
    }),
  ];
}
