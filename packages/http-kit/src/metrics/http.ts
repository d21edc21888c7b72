import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { Histogram, type Registry, register } from "prom-client";

/** The route label of a request no declared route answered: a 404, a CORS preflight, a refusal before routing. */
export const UNMATCHED_ROUTE = "unmatched";

/** Where the route table notes the template a response answers for. */
const ROUTE_TEMPLATE = Symbol("route template");

type Templated = ServerResponse & { [ROUTE_TEMPLATE]?: string };

/**
 * Notes the declared path of the route answering `res` (`/api/tasks/:id`): the route table calls
 * it as the route starts, so the duration histogram is labelled by template, never by the raw URL.
 */
export function setRouteTemplate(res: ServerResponse, template: string): void {
  (res as Templated)[ROUTE_TEMPLATE] = template;
}

/** The template {@link setRouteTemplate} noted, or {@link UNMATCHED_ROUTE}. */
export function routeTemplateOf(res: ServerResponse): string {
  return (res as Templated)[ROUTE_TEMPLATE] ?? UNMATCHED_ROUTE;
}

/** `2xx`, `3xx`, `4xx` or `5xx` (Node only writes statuses from 100 to 999). */
export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** The method label: the usual methods as they are, anything else the parser accepts as `other`. */
export function methodLabel(method: string | undefined): string {
  return method !== undefined && KNOWN_METHODS.has(method) ? method : "other";
}

/** Seconds; from a cached answer on the API (under a millisecond) to a long stream. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The request duration histogram of one service's server. */
export interface HttpMetrics {
  /** Observes every request `server` receives (listening before the app, so a synchronous answer is seen). */
  observe(server: Server): void;
  /** Observes one request: from now until its response closes (sent, or the client gone). */
  track(req: IncomingMessage, res: ServerResponse): void;
}

/**
 * `http_request_duration_seconds{method, route, status_class}`: every request of the server, from
 * its handling to the response's close, by route template ({@link setRouteTemplate}) and status
 * class. Upgraded connections (WebSocket) are not requests here: the API counts open sockets.
 */
export function httpMetrics(registry: Registry = register): HttpMetrics {
  const duration = new Histogram({
    name: "http_request_duration_seconds",
    help: "Duration of HTTP requests by method, route template and status class",
    labelNames: ["method", "route", "status_class"] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const track = (req: IncomingMessage, res: ServerResponse): void => {
    const started = performance.now();
    res.once("close", () => {
      duration.observe(
        { method: methodLabel(req.method), route: routeTemplateOf(res), status_class: statusClass(res.statusCode) },
        (performance.now() - started) / 1000,
      );
    });
  };
  return { track, observe: (server) => void server.prependListener("request", track) };
}
