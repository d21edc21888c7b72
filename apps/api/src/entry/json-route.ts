import { ok } from "@app/contracts";
import { parseOrThrow, setContextUser } from "@app/http-kit";
import type { Request, RequestHandler, Response } from "express";
import type { z } from "zod";
import { type Authenticate, type AuthUser, authorizationOf } from "./authenticate.js";
import { readJsonBody } from "./body.js";

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/** What a JSON route handler receives: the verified user and the validated inputs; no `res`. */
export interface JsonContext<P, Q, B> {
  userId: string;
  auth: AuthUser;
  params: P;
  query: Q;
  body: B;
  /** Sets a response header (e.g. the next-page cursor). */
  setHeader(name: string, value: string): void;
  /** The path and query of this request (to build links). */
  url: string;
}

/** Declaration of a JSON CRUD route. */
export interface JsonRouteSpec<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  R = unknown,
> {
  /** Authentication is declared on the route; business JSON routes always require a bearer JWT. */
  auth: true;
  params?: P;
  query?: Q;
  body?: B;
  /** Response schema (documentation: OpenAPI). */
  response?: z.ZodType;
  /** Success status (default 200; 201 on create; 204 sends no body). */
  status?: 200 | 201 | 202 | 204;
  summary?: string;
  handler: (ctx: JsonContext<Out<P>, Out<Q>, Out<B>>) => Promise<R> | R;
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return value instanceof Promise;
}

/**
 * The JSON entry pattern: authenticate with the shared primitive (zero database queries) and tag
 * the request context with the user, then validate params, query and body with the contracts
 * schemas (400 `validation_failed`), call the handler, and answer `ok(data)` with the declared
 * status (204: no body). A bearer is required; a cookie is never read.
 *
 * No step awaits unless it has to: authentication of a repeated token, validation and a handler
 * that answers from the claims (GET /api/me) all run synchronously in the request's own turn, so
 * such a route costs no promise at all; a body, a database-backed handler, a token not yet in the
 * verified cache (jose verifies asynchronously) or a key-set fetch continue asynchronously. A failure is thrown or rejected, and Express 5 passes either to the
 * error handler.
 */
export function jsonRoute<P extends z.ZodType | undefined, Q extends z.ZodType | undefined, B extends z.ZodType | undefined, R>(
  authenticate: Authenticate,
  spec: JsonRouteSpec<P, Q, B, R>,
): RequestHandler {
  const status = spec.status ?? 200;

  function send(res: Response, data: R): void {
    if (status === 204) {
      res.status(204).end();
      return;
    }
    res.status(status).json(ok(data));
  }

  function run(req: Request, res: Response, auth: AuthUser, params: Out<P>, query: Out<Q>, body: Out<B>): void | Promise<void> {
    const data = spec.handler({
      userId: auth.userId,
      auth,
      params,
      query,
      body,
      setHeader: (name, value) => res.setHeader(name, value),
      url: req.originalUrl,
    });
    if (isPromise(data)) return data.then((value) => send(res, value));
    send(res, data);
  }

  function authenticated(req: Request, res: Response, auth: AuthUser): void | Promise<void> {
    req.auth = auth;
    setContextUser(auth.userId);
    // Params and query are checked before the body is read (a bad id answers 400 without reading it).
    const params = (spec.params ? parseOrThrow(spec.params, req.params, "params") : undefined) as Out<P>;
    const query = (spec.query ? parseOrThrow(spec.query, req.query, "query") : undefined) as Out<Q>;
    const bodySchema = spec.body;
    if (!bodySchema) return run(req, res, auth, params, query, undefined as Out<B>);
    return readJsonBody(req, res).then((raw) => run(req, res, auth, params, query, parseOrThrow(bodySchema, raw, "body") as Out<B>));
  }

  return (req: Request, res: Response) => {
    const auth = req.auth ?? authenticate(authorizationOf(req));
    if (isPromise(auth)) return auth.then((value) => authenticated(req, res, value));
    return authenticated(req, res, auth);
  };
}
