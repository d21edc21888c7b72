import http, { type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import express from "express";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { AppError } from "../app-error.js";
import { errorHandler, notFoundHandler } from "../error-handler.js";
import { createLogger } from "../logger.js";
import { guard } from "../route/guard.js";
import { defineRoute } from "../route/spec.js";
import { RouteTable } from "../route/table.js";
import { httpMetrics, statusClass } from "./http.js";
import { startMetricsListener, stopMetricsListener } from "./listener.js";
import { poolMetrics } from "./pool.js";
import { processMetrics } from "./process.js";

const quiet = createLogger({ name: "test", destination: new Writable({ write: (_c, _e, cb) => cb() }) });
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await stopMetricsListener(server);
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const bearer = guard("bearer", (req) => {
  if (req.headers.authorization !== "Bearer good") throw new AppError("unauthorized", "sign in first");
});

/** A service as identity and the API build theirs: a route table, 404, errors, on a real server observed by `registry`. */
async function service(registry: Registry): Promise<string> {
  const table = new RouteTable().add(
    defineRoute({
      method: "get",
      path: "/api/tasks/:id",
      tag: "t",
      summary: "one task",
      params: z.object({ id: z.string().max(40) }),
      guards: [bearer],
      handler: ({ params }) => ({ id: params.id }),
    }),
    defineRoute({
      method: "get",
      path: "/api/slow",
      tag: "t",
      summary: "answers later",
      handler: () => new Promise<{ ok: number }>((r) => setTimeout(() => r({ ok: 1 }), 30)),
    }),
    defineRoute({
      method: "get",
      path: "/api/broken",
      tag: "t",
      summary: "fails",
      handler: () => {
        throw new Error("bug");
      },
    }),
  );
  const app = express();
  app.use(table.router());
  app.use(notFoundHandler());
  app.use(errorHandler({ logger: quiet }));
  const server = http.createServer(app);
  httpMetrics(registry).observe(server);
  return listen(server);
}

/** The value of one sample line of the exposition, or undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("request duration histogram", () => {
  it("labels each answer with its route's declared path and status class, never the URL", async () => {
    const registry = new Registry();
    const base = await service(registry);
    const good = { authorization: "Bearer good" };
    for (const id of ["t-1", "t-2", "t-3"]) expect((await fetch(`${base}/api/tasks/${id}`, { headers: good })).status).toBe(200);
    expect((await fetch(`${base}/api/tasks/t-4`)).status).toBe(401); // refused by a guard: still the route's
    expect((await fetch(`${base}/api/tasks/${"x".repeat(41)}`, { headers: good })).status).toBe(400);
    expect((await fetch(`${base}/api/broken`)).status).toBe(500);
    expect((await fetch(`${base}/api/slow`)).status).toBe(200);
    expect((await fetch(`${base}/secret-path-123`)).status).toBe(404);
    expect((await fetch(`${base}/api/tasks/t-5`, { method: "PROPFIND" })).status).toBe(404);

    const text = await registry.metrics();
    const count = (labels: string) => sample(text, `http_request_duration_seconds_count{${labels}}`);
    expect(count('method="GET",route="/api/tasks/:id",status_class="2xx"')).toBe(3);
    expect(count('method="GET",route="/api/tasks/:id",status_class="4xx"')).toBe(2);
    expect(count('method="GET",route="/api/broken",status_class="5xx"')).toBe(1);
    expect(count('method="GET",route="unmatched",status_class="4xx"')).toBe(1);
    expect(count('method="other",route="unmatched",status_class="4xx"')).toBe(1);
    // The slow route took at least its 30 ms: it is not in the 25 ms bucket.
    expect(sample(text, 'http_request_duration_seconds_bucket{le="0.025",method="GET",route="/api/slow",status_class="2xx"}')).toBe(0);
    expect(sample(text, 'http_request_duration_seconds_bucket{le="0.05",method="GET",route="/api/slow",status_class="2xx"}')).toBe(1);
    for (const raw of ["t-1", "t-4", "secret-path-123", "xxxx"]) expect(text).not.toContain(raw);
  });

  it("times a handler that works and answers in the request's own turn from its start", async () => {
    const registry = new Registry();
    const server = http.createServer((_req, res) => {
      const until = performance.now() + 30;
      while (performance.now() < until); // synchronous work, as a CPU-bound handler does
      res.end("at once");
    });
    httpMetrics(registry).observe(server);
    const base = await listen(server);
    await fetch(`${base}/`);
    const text = await registry.metrics();
    expect(sample(text, 'http_request_duration_seconds_count{method="GET",route="unmatched",status_class="2xx"}')).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_bucket{le="0.025",method="GET",route="unmatched",status_class="2xx"}')).toBe(0);
  });

  it("names status classes", () => {
    expect([101, 200, 204, 302, 404, 429, 500, 503].map(statusClass)).toEqual(["1xx", "2xx", "2xx", "3xx", "4xx", "4xx", "5xx", "5xx"]);
  });
});

describe("metrics listener", () => {
  it("answers GET /metrics in the Prometheus text format and 404 to anything else", async () => {
    const registry = new Registry();
    processMetrics(registry);
    poolMetrics({ totalCount: 4, idleCount: 3, waitingCount: 1, options: { max: 10 } }, registry);
    const server = await startMetricsListener({ port: 0, registry, logger: quiet });
    servers.push(server);
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await res.text();
    expect(text).toContain("# TYPE process_cpu_user_seconds_total counter");
    expect(sample(text, "nodejs_eventloop_lag_p99_seconds")).toBeGreaterThanOrEqual(0);
    expect(sample(text, "db_pool_connections")).toBe(4);
    expect(sample(text, "db_pool_idle_connections")).toBe(3);
    expect(sample(text, "db_pool_waiting_requests")).toBe(1);
    expect(sample(text, "db_pool_max_connections")).toBe(10);
    expect((await fetch(`${base}/metrics?format=x`)).status).toBe(200);
    expect((await fetch(`${base}/metrics`, { method: "POST" })).status).toBe(404);
    expect((await fetch(`${base}/`)).status).toBe(404);
    expect((await fetch(`${base}/metrics/extra`)).status).toBe(404);
  });

  it("answers 500 when a collector fails, and the next scrape works again", async () => {
    const registry = new Registry();
    let broken = true;
    poolMetrics(
      {
        get totalCount(): number {
          if (broken) throw new Error("pool gone");
          return 2;
        },
        idleCount: 0,
        waitingCount: 0,
      },
      registry,
    );
    const server = await startMetricsListener({ port: 0, registry, logger: quiet });
    servers.push(server);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    expect((await fetch(url)).status).toBe(500);
    broken = false;
    expect(sample(await (await fetch(url)).text(), "db_pool_connections")).toBe(2);
  });
});
