import { ok } from "@app/contracts";
import type { Request, RequestHandler, Response } from "express";
import { AppError } from "../app-error.js";
import { setRouteTemplate } from "../metrics/http.js";
import { parseOrThrow } from "../validate.js";
import type { Guard } from "./guard.js";
import { ANSWERED, type AnyRoute, routeKey } from "./spec.js";

/** What the table tells each route's pipeline. */
export interface PipelineOptions {
  /**
   * Sees every success before it is written (see table.ts): the data, or `raw` for a handler that
   * wrote its own response.
   */
  checkResponse?: ((route: AnyRoute, data: unknown, raw: boolean) => void) | undefined;
}

function isPromise(value: unknown): value is Promise<unknown> {
  return value instanceof Promise;
}

/** Validated params and query of one request; filled before the first guard that reads the body. */
interface Inputs {
  params: unknown;
  query: unknown;
}

const NO_INPUTS: Inputs = Object.freeze({ params: undefined, query: undefined });

/**
 * Builds the one Express handler of a route: its guards in order, then validation of params,
 * query and body with the route's schemas (400 `validation_failed`), the handler, and the reply.
 * Params and query are checked before the body is read (a bad id answers 400 without reading
 * it), and after the guards that come first (an unauthenticated caller gets 401, not 400).
 * Nothing awaits unless a step returns a promise; a failure is thrown or rejected, and Express
 * hands either to the one error handler (error-handler.ts). The response is labelled with the
 * route's declared path first, for the request duration histogram (metrics/http.ts).
 */
export function routeHandler(route: AnyRoute, options: PipelineOptions = {}): RequestHandler {
  const guards: readonly Guard[] = route.guards ?? [];
  const status = route.status ?? 200;
  const reply = route.reply ?? "envelope";
  const { checkResponse } = options;
  if (route.body && !guards.some((g) => g.readsBody)) {
    throw new Error(`${routeKey(route)} declares a body schema but no guard that reads the body`);
  }

  function inputs(req: Request): Inputs {
    // A route without params or query schemas (GET /api/me) shares one object: no allocation.
    if (!route.params && !route.query) return NO_INPUTS;
    return {
      params: route.params ? parseOrThrow(route.params, req.params, "params") : undefined,
      query: route.query ? parseOrThrow(route.query, req.query, "query") : undefined,
    };
  }

  function send(res: Response, data: unknown): void {
    if (typeof reply === "object" || data === ANSWERED) {
      if (checkResponse) checkResponse(route, undefined, true);
      return;
    }
    if (checkResponse) checkResponse(route, data, false);
    if (status === 204) {
      res.status(204).end();
      return;
    }
    res.status(status).json(reply === "envelope" ? ok(data) : data);
  }

  function finish(req: Request, res: Response, checked: Inputs | undefined): void | Promise<void> {
    const { params, query } = checked ?? inputs(req);
    const body = route.body ? parseOrThrow(route.body, req.body, "body") : undefined;
    const data = route.handler({ params, query, body, req, res });
    if (isPromise(data)) return data.then((value) => send(res, value));
    send(res, data);
  }

  function from(index: number, req: Request, res: Response, checked: Inputs | undefined): void | Promise<void> {
    let known = checked;
    for (let i = index; i < guards.length; i++) {
      const step = guards[i] as Guard;
      if (step.readsBody && !known) known = inputs(req);
      if (step.around) {
        const at = known;
        const next = i + 1;
        return step.around(req, res, () => from(next, req, res, at));
      }
      const result = step.run(req, res);
      if (isPromise(result)) {
        const next = i + 1;
        const at = known;
        return result.then(() => (res.headersSent ? undefined : from(next, req, res, at)));
      }
      if (res.headersSent) return;
    }
    return finish(req, res, known);
  }

  return (req, res) => {
    // The request duration histogram's label (metrics/http.ts): the declared path, never the URL.
    setRouteTemplate(res, route.path);
    return from(0, req, res, undefined);
  };
}

/** The error a response that breaks its route's schema becomes (only where responses are checked). */
export function nonConforming(route: AnyRoute, issues: string): AppError {
  return new AppError("internal_error", `response of ${routeKey(route)} does not conform to its schema: ${issues}`, { expose: false });
}
