import type { Request, RequestHandler, Response } from "express";

/**
 * One ordered step of a route, run before its handler (node-oidc-provider orders its middleware
 * the same way, on the route it applies to). A guard refuses by throwing or rejecting (an
 * `AppError` becomes the error envelope), may answer by itself (a limiter's 429 written through
 * the envelope writer ends the route), and may set request fields its route's handler reads
 * (`req.auth`). A guard that returns nothing costs no promise: a route whose guards all finish
 * synchronously answers in the request's own turn.
 */
export interface Guard {
  /** Shown in errors and the OpenAPI description (e.g. "bearer", "rateLimit(signIn)"). */
  readonly name: string;
  run(req: Request, res: Response): void | Promise<void>;
  /**
   * For a guard that holds a context for the rest of the route (an AsyncLocalStorage store, as
   * `asyncLocalStorage.run(store, next)` in middleware), or that continues the route itself once
   * what it waits for has arrived (the API's bearer guard, in the reaction to its verification):
   * runs `rest` (the following guards and the handler) and returns what `rest` returns, or a
   * promise of it. Such a guard's `run` is not called.
   */
  around?<T>(req: Request, res: Response, rest: () => T): T;
  /** The OpenAPI security scheme this guard stands for (e.g. "bearerAuth"). */
  readonly security?: string;
  /** True for a guard that reads the request body: params and query are validated before it runs. */
  readonly readsBody?: boolean;
  /** Request body media types the guard accepts, for the OpenAPI document (e.g. multipart/form-data). */
  readonly bodyTypes?: readonly string[];
}

type GuardExtra = Omit<Guard, "name" | "run" | "around">;

/** Declares a guard from a plain function. */
export function guard(name: string, run: (req: Request, res: Response) => void | Promise<void>, extra: GuardExtra = {}): Guard {
  return { name, run, ...extra };
}

/**
 * Declares a guard that runs the rest of its route inside `wrap` (see {@link Guard.around}),
 * e.g. `(req, _res, rest) => storage.run(keyOf(req), rest)`.
 */
export function aroundGuard(name: string, wrap: <T>(req: Request, res: Response, rest: () => T) => T, extra: GuardExtra = {}): Guard {
  return { name, run: () => undefined, around: wrap, ...extra };
}

const passes = (error: unknown) => error === undefined || error === null || error === "route" || error === "router";

/**
 * Runs one connect-style middleware. When it calls `next` (or answers) before returning, as
 * cookie parsers and most limiters with an in-memory store do, no promise is made; otherwise
 * the returned promise settles on its `next`, or when it answers the request itself.
 */
function runMiddleware(handler: RequestHandler, req: Request, res: Response): void | Promise<void> {
  let outcome: { error: unknown } | undefined;
  let wake: ((result: { error: unknown }) => void) | undefined;
  const settle = (result: { error: unknown }) => {
    if (outcome) return;
    outcome = result;
    wake?.(result);
  };
  const done = (error?: unknown) => settle({ error: passes(error) ? undefined : error });
  try {
    const result = handler(req, res, done) as unknown;
    if (result instanceof Promise) result.catch(done);
  } catch (error) {
    done(error);
  }
  if (outcome) {
    if (outcome.error !== undefined) throw outcome.error;
    return;
  }
  if (res.headersSent || res.writableEnded) {
    outcome = { error: undefined };
    return;
  }
  return new Promise<void>((resolve, reject) => {
    const answered = () => settle({ error: undefined });
    res.once("finish", answered);
    res.once("close", answered);
    wake = ({ error }) => {
      res.off("finish", answered);
      res.off("close", answered);
      if (error !== undefined) reject(error);
      else resolve();
    };
  });
}

/**
 * Adapts connect-style middleware (`(req, res, next)`) as a guard: it passes when the middleware
 * calls `next()`, refuses with what it passes to `next(error)`, and ends the route when the
 * middleware answers the request itself. Middleware that calls `next` synchronously runs
 * synchronously (no promise, no listener).
 */
export function middlewareGuard(name: string, handlers: RequestHandler | readonly RequestHandler[], extra: GuardExtra = {}): Guard {
  const chain = Array.isArray(handlers) ? [...handlers] : [handlers as RequestHandler];
  const from = (index: number, req: Request, res: Response): void | Promise<void> => {
    for (let i = index; i < chain.length; i++) {
      const result = runMiddleware(chain[i] as RequestHandler, req, res);
      if (result instanceof Promise) {
        const next = i + 1;
        return result.then(() => (res.headersSent || res.writableEnded ? undefined : from(next, req, res)));
      }
      if (res.headersSent || res.writableEnded) return;
    }
  };
  return guard(name, (req, res) => from(0, req, res), extra);
}
