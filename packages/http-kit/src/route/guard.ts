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
  /** The OpenAPI security scheme this guard stands for (e.g. "bearerAuth"). */
  readonly security?: string;
  /** True for a guard that reads the request body: params and query are validated before it runs. */
  readonly readsBody?: boolean;
  /** Request body media types the guard accepts, for the OpenAPI document (e.g. multipart/form-data). */
  readonly bodyTypes?: readonly string[];
}

/** Declares a guard from a plain function. */
export function guard(
  name: string,
  run: (req: Request, res: Response) => void | Promise<void>,
  extra: Omit<Guard, "name" | "run"> = {},
): Guard {
  return { name, run, ...extra };
}

/**
 * Adapts connect-style middleware (`(req, res, next)`) as a guard: it passes when the middleware
 * calls `next()`, refuses with what it passes to `next(error)`, and ends the route when the
 * middleware answers the request itself.
 */
export function middlewareGuard(
  name: string,
  handlers: RequestHandler | readonly RequestHandler[],
  extra: Omit<Guard, "name" | "run"> = {},
): Guard {
  const chain = Array.isArray(handlers) ? [...handlers] : [handlers as RequestHandler];
  const runOne = (handler: RequestHandler, req: Request, res: Response) =>
    new Promise<void>((resolve, reject) => {
      const answered = () => resolve();
      res.once("finish", answered);
      res.once("close", answered);
      const done = (error?: unknown) => {
        res.off("finish", answered);
        res.off("close", answered);
        if (error !== undefined && error !== null && error !== "route" && error !== "router") reject(error);
        else resolve();
      };
      try {
        const result = handler(req, res, done) as unknown;
        if (result instanceof Promise) result.catch(done);
      } catch (error) {
        done(error);
      }
    });
  return guard(
    name,
    async (req, res) => {
      for (const handler of chain) {
        await runOne(handler, req, res);
        if (res.headersSent || res.writableEnded) return;
      }
    },
    extra,
  );
}
