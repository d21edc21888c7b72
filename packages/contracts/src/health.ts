import { z } from "zod";

/** Answer of `GET /healthz`: the process is up; `instance` is the launcher's per-launch nonce, when it set one. */
export const healthResponse = z.object({ status: z.literal("ok"), instance: z.string().optional() });
export type HealthResponse = z.infer<typeof healthResponse>;

/** Answer of `GET /readyz` when the service is ready (503 with `status: "unavailable"` otherwise). */
export const readyResponse = z.object({ status: z.literal("ready") });
export type ReadyResponse = z.infer<typeof readyResponse>;
