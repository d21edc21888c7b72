import { Router } from "express";
import { buildOpenApi } from "../lib/openapi.js";
import type { RouteRegistry } from "../lib/registry.js";

/** GET /api/openapi.json: the generated OpenAPI 3.1 document (public, built once on first use). */
export function openApiRoutes(registry: RouteRegistry, serverUrl: string): Router {
  const router = Router();
  let cached: string | undefined;
  router.get("/api/openapi.json", (_req, res) => {
    cached ??= JSON.stringify(buildOpenApi(registry, { title: "API", version: "1.0.0", serverUrl }));
    res.setHeader("content-type", "application/json; charset=utf-8");
    res.setHeader("cache-control", "public, max-age=300");
    res.status(200).send(cached);
  });
  return router;
}
