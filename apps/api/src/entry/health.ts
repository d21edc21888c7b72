import type { Db } from "@app/db";
import { Router } from "express";

/** `/healthz`: the process is up. `/readyz`: the database answers and events are being received (503 otherwise). */
export function healthRoutes(db: Pick<Db, "ping">, bus: { readonly connected: boolean }): Router {
  const router = Router();
  router.get("/healthz", (_req, res) => {
    // `instance`: the launcher's per-launch nonce (tools/stack/src/processes.ts), when it set one.
    res.json({ status: "ok", instance: process.env.STACK_INSTANCE_ID });
  });
  router.get("/readyz", async (_req, res) => {
    const database = await db.ping();
    const ready = database && bus.connected;
    res
      .status(ready ? 200 : 503)
      .json({ status: ready ? "ready" : "unavailable", database: database ? "up" : "down", events: bus.connected ? "up" : "down" });
  });
  return router;
}
