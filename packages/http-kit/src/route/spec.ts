import type { Request, Response } from "express";
import type { z } from "zod";
import type { Guard } from "./guard.js";

/** HTTP methods routes are declared with. */
export type Method = "get" | "post" | "put" | "patch" | "delete";

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;
/**
 * What a handler returns for a response schema: its input type, or its output type for a schema
 * declared as `z.ZodType<T>` (whose input type is `unknown`), so the return is still checked.
 */
type In<S> = S extends z.ZodType ? (unknown extends z.input<S> ? z.output<S> : z.input<S>) : unknown;

/**
 * What a handler of a `json` or `envelope` route returns when it answered by itself instead of
 * returning data (a route that answers JSON to API clients and a page or a redirect to a
 * browser): nothing more is written, and the answer is counted as the handler's own.
 */
export const ANSWERED: unique symbol = Symbol("answered");
export type Answered = typeof ANSWERED;

/**
 * How a route's success is written:
 * - `envelope` (default): `{ ok: true, data }` with the route's status (204: no body);
 * - `json`: the data as it is (better-auth's wire, which has no envelope);
 * - `raw`: the handler writes the response itself (stream, file, redirect, multipart answer);
 *   `contentType` documents it ("redirect" for a 30x with `location`).
 */
export type Reply = "envelope" | "json" | { raw: string };

/** What a handler receives: the validated inputs, and the request and response for what guards set. */
export interface RouteContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  req: Request;
  res: Response;
}

/** One route, declared once: method, path, schemas from contracts, ordered guards, handler. */
export interface RouteSpec<
  P extends z.ZodType | undefined = z.ZodType | undefined,
  Q extends z.ZodType | undefined = z.ZodType | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
  R extends z.ZodType | undefined = z.ZodType | undefined,
> {
  method: Method;
  /** Express path, e.g. `/api/tasks/:id`. */
  path: string;
  /** OpenAPI tag and summary. */
  tag: string;
  summary: string;
  params?: P;
  query?: Q;
  /** JSON body schema; the route needs a guard that reads the body (`jsonBodyGuard`). */
  body?: B;
  /** Schema of the success data (inside the envelope unless `reply` says otherwise). */
  response?: R;
  /** Success status (default 200; 204 sends no body). */
  status?: number;
  reply?: Reply;
  /** True when the data is a page: an array with the next cursor in `x-next-cursor`. */
  paginated?: boolean;
  /** Run in order before the handler. */
  guards?: readonly Guard[];
  /**
   * Returns the success data (typed by the response schema, so a handler cannot answer a shape
   * the contracts do not publish), nothing for `raw` replies and 204, or {@link ANSWERED} when it
   * wrote the response itself.
   */
  handler(ctx: RouteContext<Out<P>, Out<Q>, Out<B>>): In<R> | Answered | Promise<In<R> | Answered>;
}

/** A route as the table keeps it (its types erased). */
export type AnyRoute = RouteSpec<z.ZodType | undefined, z.ZodType | undefined, z.ZodType | undefined, z.ZodType | undefined>;

/** Declares a route, inferring its handler's types from its schemas. */
export function defineRoute<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  R extends z.ZodType | undefined = undefined,
>(spec: RouteSpec<P, Q, B, R>): AnyRoute {
  return spec as unknown as AnyRoute;
}

/** `GET /api/tasks/:id` — how a route is named in errors, logs and coverage. */
export function routeKey(route: Pick<AnyRoute, "method" | "path">): string {
  return `${route.method.toUpperCase()} ${route.path}`;
}
