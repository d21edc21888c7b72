import type { Db } from "@app/db";
import { Router } from "express";

/** `/healthz`: the process is up. `/readyz`: and its database answers (503 otherwise). */
export function healthRoutes(db: Pick<Db, "ping">): Router {
  const router = Router();
  router.get("/healthz", (_req, res) => {
    // `instance`: the launcher's per-launch nonce (tools/stack/src/processes.ts), when it set one.
    res.json({ status: "ok", instance: process.env.STACK_INSTANCE_ID });
  });
  router.get("/readyz", async (_req, res) => {
    const ready = await db.ping();
    res.status(ready ? 200 : 503).json(ready ? { status: "ready" } : { status: "unavailable", database: "unreachable" });
  });
  return router;
}
