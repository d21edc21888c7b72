import type { RequestHandler } from "express";

/**
 * Runs middleware one after the other as one Express layer: each still calls `next` (at once or
 * later), and an error, passed, thrown or rejected, ends the chain there. Express tests every layer of the
 * app against every request; the few that run for every request cost one test as one layer.
 */
export function inOrder(handlers: readonly RequestHandler[]): RequestHandler {
  return (req, res, done) => {
    let index = 0;
    const next = (error?: unknown): void => {
      if (error !== undefined && error !== null) {
        done(error);
        return;
      }
      const handler = handlers[index++];
      if (handler === undefined) {
        done();
        return;
      }
      try {
        const result: unknown = handler(req, res, next);
        if (result instanceof Promise) result.catch(done);
      } catch (thrown) {
        done(thrown);
      }
    };
    next();
  };
}
