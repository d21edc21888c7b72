import type { RequestHandler, Router } from "express";
import type { z } from "zod";
import type { Authenticate } from "../entry/authenticate.js";
import { type JsonRouteSpec, jsonRoute } from "../entry/json-route.js";

/** HTTP methods routes are declared with. */
export type Method = "get" | "post" | "put" | "patch" | "delete";

/** How a route authenticates, as the OpenAPI document states it. */
export type RouteAuth = "bearer" | "cookie" | "none";

/** One documented route. */
export interface RouteDoc {
  method: Method;
  /** Express path, e.g. `/api/tasks/:id`. */
  path: string;
  summary: string;
  tag: string;
  auth: RouteAuth;
  params?: z.ZodType | undefined;
  query?: z.ZodType | undefined;
  /** JSON body schema. */
  body?: z.ZodType | undefined;
  /** Other accepted request content types (e.g. multipart/form-data). */
  altBodyTypes?: string[];
  status: number;
  /** Data schema inside `ok(...)` for JSON routes. */
  response?: z.ZodType | undefined;
  /** Raw response content type (SSE, file, redirect) instead of the JSON envelope. */
  rawResponse?: string;
  /** True when data is an array with the next cursor in `x-next-cursor`. */
  paginated?: boolean;
}

/** The route registry the OpenAPI document is generated from. */
export class RouteRegistry {
  readonly routes: RouteDoc[] = [];

  add(doc: RouteDoc): void {
    this.routes.push(doc);
  }
}

/** Documentation of a JSON route beyond its spec. */
export interface JsonDoc {
  tag: string;
  summary: string;
  paginated?: boolean;
}

/**
 * Declares routes on a router and records each in the registry, so the served OpenAPI document
 * cannot drift from what is mounted.
 */
export class ApiRoutes {
  constructor(
    readonly router: Router,
    readonly registry: RouteRegistry,
    readonly authenticate: Authenticate,
  ) {}

  /** A JSON CRUD route (see {@link jsonRoute}). */
  json<P extends z.ZodType | undefined, Q extends z.ZodType | undefined, B extends z.ZodType | undefined, R>(
    method: Method,
    path: string,
    doc: JsonDoc,
    spec: JsonRouteSpec<P, Q, B, R>,
  ): void {
    this.registry.add({
      method,
      path,
      summary: doc.summary,
      tag: doc.tag,
      auth: "bearer",
      params: spec.params,
      query: spec.query,
      body: spec.body,
      status: spec.status ?? 200,
      response: spec.response,
      paginated: doc.paginated ?? false,
    });
    this.router[method](path, jsonRoute(this.authenticate, spec));
  }

  /** A raw route (streaming, multipart, file, redirect) with its own middleware chain. */
  raw(doc: RouteDoc, ...handlers: RequestHandler[]): void {
    this.registry.add(doc);
    this.router[doc.method](doc.path, ...handlers);
  }
}
